/**
 * The SDK end-to-end files' common setup: one in-process server per file with a client on it,
 * a fresh queue name per call (tests never see each other's jobs), and the workers a test started
 * closed after it, should the test not have closed them.
 */
import { afterAll, afterEach, beforeAll } from "vitest";
import { Sluice, type Worker } from "../../client/src/index.js";
import { type TestServer, startTestServer, stopAllServers } from "./server.js";
import { removeTempDirs } from "./tmp.js";
import { within } from "./wait.js";

export interface SdkTestServer {
  /** Queue names `<prefix>-<pid>-<n>`, a new one each call. */
  freshQueue(): string;
  /** Registers a worker for closing after the test. */
  track<W extends Worker>(worker: W): W;
}

/** Registers the file's hooks; `ready` gets the server and its client once started. */
export function useSdkServer(prefix: string, ready: (server: TestServer, sluice: Sluice) => void): SdkTestServer {
  const workers: Worker[] = [];
  let queueSeq = 0;
  beforeAll(async () => {
    const server = await startTestServer();
    ready(server, new Sluice({ url: server.url }));
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => within(10_000, w.close({ timeoutMs: 2_000 }), "worker close")));
  });
  afterAll(async () => {
    await stopAllServers();
    await removeTempDirs();
  });
  return {
    freshQueue: () => `${prefix}-${process.pid}-${++queueSeq}`,
    track(worker) {
      workers.push(worker);
      return worker;
    },
  };
}
