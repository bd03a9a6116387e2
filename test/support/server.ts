/**
 * In-process Sluice servers for tests: each on a random port with its own temp data dir.
 * `stopAllServers()` (call it in afterAll) closes every server still open and removes its dir.
 */
import type { Clock } from "../../src/core/clock.js";
import type { IdSource } from "../../src/core/ids.js";
import { type Logger, type ServerConfig, startServer } from "../../src/server/index.js";
import { testStoreConfig } from "./test-store.js";
import { makeTempDir, removeTempDir } from "./tmp.js";

export type StartedServer = Awaited<ReturnType<typeof startServer>>;

export interface TestServer {
  url: string;
  port: number;
  app: StartedServer["app"];
  queues: StartedServer["queues"];
  credentials: StartedServer["credentials"];
  dataDir: string;
  /** The server's own close (not idempotent on every implementation; prefer stop()). */
  close(): Promise<void>;
  /** Closes the server (idempotent) and removes its data dir unless `keepDataDir`. */
  stop(opts?: { keepDataDir?: boolean }): Promise<void>;
}

const open = new Set<TestServer>();

export async function startTestServer(opts: { clock?: Clock; ids?: IdSource; dataDir?: string; config?: Partial<ServerConfig>; logger?: Logger } = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? (await makeTempDir("sluice-srv-"));
  const started = await startServer({ logLevel: "warn", ...(await testStoreConfig(dataDir)), ...opts.config, host: opts.config?.host ?? "127.0.0.1", port: 0, dataDir, clock: opts.clock, ids: opts.ids, ...(opts.logger ? { logger: opts.logger } : {}) });
  let stopped: Promise<void> | undefined;
  const server: TestServer = {
    url: started.url,
    port: started.port,
    app: started.app,
    queues: started.queues,
    credentials: started.credentials,
    dataDir,
    close: () => server.stop({ keepDataDir: true }),
    stop(stopOpts: { keepDataDir?: boolean } = {}): Promise<void> {
      stopped ??= (async () => {
        open.delete(server);
        await started.close();
      })();
      return stopped.then(async () => {
        if (!stopOpts.keepDataDir) await removeTempDir(dataDir);
      });
    },
  };
  open.add(server);
  return server;
}

export async function stopAllServers(): Promise<void> {
  await Promise.all([...open].map((s) => s.stop()));
}
