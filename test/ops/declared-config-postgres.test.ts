/**
 * The declarative config on PostgreSQL: applied at start, re-applied without a write, and
 * exported → applied to an empty database → exported again, byte-identical.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningServer, createLogger, startServer } from "../../src/server/index.js";
import { renderConfig } from "../../src/server/declared/config-render.js";
import { createDatabase } from "../support/postgres.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const servers: RunningServer[] = [];
const drops: Array<() => Promise<void>> = [];

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(drops.map((drop) => drop()));
  await removeTempDirs();
});

async function start(configFile: string, logs: Array<Record<string, unknown>>): Promise<RunningServer> {
  const db = await createDatabase();
  drops.push(db.drop);
  const logger = createLogger({ level: "info", destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) } });
  const server = await startServer({ port: 0, dataDir: await makeTempDir(), store: "postgres", postgresUrl: db.url, logger, configFile });
  servers.push(server);
  return server;
}

const config = `queues:
  work-dlq: {}
  work:
    visibilityTimeoutSeconds: 45
    redrivePolicy: { deadLetterQueue: work-dlq, maxReceiveCount: 3 }
    tags: { team: ml }
    jobs: { maxAttempts: 4, maxRunningPerTenant: 2 }
  events.fifo: { contentBasedDeduplication: true }
schedules:
  tick: { queue: work, everySeconds: 60, paused: true }
accounts:
  "444444444444":
    queues:
      theirs: { delaySeconds: 3 }
`;

describe("declarative config on PostgreSQL", { timeout: 120_000 }, () => {
  it("applies, re-applies without a write, and exports byte-identically", async () => {
    const dir = await makeTempDir();
    const file = join(dir, "sluice.yaml");
    await writeFile(file, config);
    const logs: Array<Record<string, unknown>> = [];
    const first = await start(file, logs);
    await first.declaredConfig.reload();
    expect(logs.filter((l) => l.msg === "declarative config applied")).toMatchObject([
      { created: 5, updated: 0, deleted: 0, unchanged: 0 },
      { created: 0, updated: 0, deleted: 0, unchanged: 5 },
    ]);
    const exported = renderConfig((await (await fetch(`${first.url}/v1/config`)).json()) as Record<string, unknown>, "yaml");
    expect(exported).toContain("maxRunningPerTenant: 2");
    const exportFile = join(dir, "exported.yaml");
    await writeFile(exportFile, exported);
    const second = await start(exportFile, []);
    expect(renderConfig((await (await fetch(`${second.url}/v1/config`)).json()) as Record<string, unknown>, "yaml")).toBe(exported);
  });
});
