import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { openThreadedSqliteStore } from "../../src/stores/sqlite/threaded-store.js";
import { describeStoreConformance } from "../../src/stores/testkit/conformance.js";

// The server's default: statements on the calling thread, WAL fsyncs pipelined (wal-syncer.ts).
describeStoreConformance("sqlite", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-store-"));
  const filename = join(dir, "sluice.db");
  let store = openSqliteStore({ filename, pipelinedSync: true });
  return {
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = openSqliteStore({ filename, pipelinedSync: true });
      return store;
    },
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeStoreConformance("sqlite on a worker thread", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-store-"));
  const filename = join(dir, "sluice.db");
  let store = await openThreadedSqliteStore({ filename });
  return {
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = await openThreadedSqliteStore({ filename });
      return store;
    },
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
