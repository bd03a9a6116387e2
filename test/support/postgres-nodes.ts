/**
 * Sluice nodes sharing one PostgreSQL database, for tests of what must hold across nodes: started
 * here, closed when the test finishes (before the file's database is dropped).
 */
import { onTestFinished } from "vitest";
import { type RunningServer, type StartServerOptions, startServer } from "../../src/server/index.js";
import { makeTempDir } from "./tmp.js";

export async function startPostgresNodes(n: number, postgresUrl: string, extra: StartServerOptions = {}): Promise<RunningServer[]> {
  const nodes: RunningServer[] = [];
  onTestFinished(() => Promise.all(nodes.map((node) => node.close())).then(() => undefined));
  for (let i = 0; i < n; i++) {
    nodes.push(await startServer({ host: "127.0.0.1", port: 0, dataDir: await makeTempDir("sluice-pg-node-"), store: "postgres", postgresUrl, logLevel: "warn", ...extra }));
  }
  return nodes;
}
