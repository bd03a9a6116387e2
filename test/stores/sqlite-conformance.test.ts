import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { expect } from "vitest";
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from "../../src/stores/sqlite/sqlite-store.js";
import { describeStoreConformance } from "../../src/stores/testkit/conformance.js";
import type { StoreHandle } from "../../src/stores/testkit/conformance.js";

/**
 * Each queue's kept message count and bytes beside what its rows hold: the store moves them in
 * its writes (kept-counts.ts), so every case of the suite checks that no path missed them.
 */
function expectKeptCountsExact(filename: string): void {
  const db = new Database(filename, { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT q.name, c.messages, c.bytes,
           (SELECT count(*) FROM messages m WHERE m.queue_id = q.id) AS actualMessages,
           (SELECT coalesce(sum(coalesce(body_bytes, octet_length(body))), 0) FROM messages m WHERE m.queue_id = q.id) AS actualBytes
         FROM queues q JOIN queue_message_counts c ON c.queue_id = q.id`,
      )
      .all() as Array<{ name: string; messages: number; bytes: number; actualMessages: number; actualBytes: number }>;
    for (const r of rows) expect([r.messages, r.bytes], `queue ${r.name}'s kept counts`).toEqual([r.actualMessages, r.actualBytes]);
  } finally {
    db.close();
  }
}

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
        expectKeptCountsExact(filename);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
}

// The server's default: group commit, statements on the calling thread, WAL fsyncs pipelined (wal-syncer.ts).
describeStoreConformance("sqlite", sqliteFactory({ pipelinedSync: true }));

// One transaction per call: the suite holds for a store that doesn't group commits.
describeStoreConformance("sqlite, one commit per call", sqliteFactory({ commitPerCall: true }));
