import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from "../../src/stores/sqlite/sqlite-store.js";
import { describeStoreConformance } from "../../src/stores/testkit/conformance.js";
import type { StoreHandle } from "../../src/stores/testkit/conformance.js";

/** A fresh database file; `another()` opens a second handle on it, as a second node would. */
function sqliteFactory(options: Omit<SqliteStoreOptions, "filename">): () => Promise<StoreHandle> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-store-"));
    const filename = join(dir, "sluice.db");
    let store = openSqliteStore({ filename, ...options });
    const others: SqliteStore[] = [];
    return {
      get store() {
        return store;
      },
      async reopen() {
        await store.close();
        store = openSqliteStore({ filename, ...options });
        return store;
      },
      async another() {
        const other = openSqliteStore({ filename, ...options });
        others.push(other);
        return other;
      },
      async cleanup() {
        for (const other of others) await other.close();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
}

// The server's default: group commit, statements on the calling thread, WAL fsyncs pipelined (wal-syncer.ts).
describeStoreConformance("sqlite", sqliteFactory({ pipelinedSync: true }));

// One transaction per call: the suite holds for a store that doesn't group commits.
describeStoreConformance("sqlite, one commit per call", sqliteFactory({ commitPerCall: true }));
