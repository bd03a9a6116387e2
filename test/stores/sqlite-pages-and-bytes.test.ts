/**
 * The SQLite file's layout across an upgrade: a new database gets 8 KiB pages (a 1 KiB message's
 * row wastes most of a 4 KiB page's last quarter), one written before keeps its 4 KiB pages and
 * works as before; migration 033 counts the bytes of the messages already stored, so a byte quota
 * holds from the first send after the upgrade; migration 047 leaves messages queued as sent out of
 * the send-time index, and retention still reaches every message stored before it.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { migrate, migrationsDir } from "../../src/stores/sqlite/migrate.js";
import { openSqliteStore, sqlitePageBytes } from "../../src/stores/sqlite/sqlite-store.js";
import { messageSend } from "../../src/stores/testkit/one-call.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sluice-pages-"));
  dirs.push(dir);
  return dir;
}

const pageSizeOf = (file: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma("page_size", { simple: true }) as number;
  } finally {
    db.close();
  }
};

/** A database migrated up to (not including) `version`, with the current code's migration files. */
function databaseBefore(dir: string, version: number): Database.Database {
  const before = join(dir, `migrations-before-${version}`);
  mkdirSync(before);
  for (const f of readdirSync(migrationsDir()).filter((f) => /^\d+_.+\.sql$/.test(f) && Number.parseInt(f, 10) < version)) copyFileSync(join(migrationsDir(), f), join(before, f));
  const db = new Database(join(dir, "sluice.db"));
  db.pragma("journal_mode = WAL");
  migrate(db, before);
  return db;
}

describe("the SQLite file across an upgrade", () => {
  it("makes a new database with 8 KiB pages", async () => {
    const file = join(tempDir(), "sluice.db");
    const store = openSqliteStore({ filename: file });
    await store.close();
    expect(sqlitePageBytes).toBe(8192);
    expect(pageSizeOf(file)).toBe(8192);
  });

  it("keeps an older database's 4 KiB pages, and migration 033 counts the bytes it already holds", async () => {
    const dir = tempDir();
    const file = join(dir, "sluice.db");
    const before = join(dir, "migrations-before-033");
    mkdirSync(before);
    for (const f of readdirSync(migrationsDir()).filter((f) => /^\d+_.+\.sql$/.test(f) && Number.parseInt(f, 10) < 33)) copyFileSync(join(migrationsDir(), f), join(before, f));
    const old = new Database(file);
    old.pragma("page_size = 4096");
    old.pragma("journal_mode = WAL");
    migrate(old, before);
    old.prepare("INSERT INTO queues (account, name, config, tags, created_at_ms, updated_at_ms) VALUES ('', 'q', ?, '{}', 1, 1)").run(JSON.stringify(defaultQueueConfig(false)));
    const queueId = old.prepare<[], number>("SELECT id FROM queues WHERE name = 'q'").pluck().get()!;
    const insert = old.prepare(
      "INSERT INTO messages (queue_id, message_id, body, body_md5, sent_at_ms, visible_at_ms, priority, sender_id) VALUES (?, ?, ?, 'md5', 1, 1, 0, 's')",
    );
    insert.run(queueId, "m1", "héllo");
    insert.run(queueId, "m2", "x".repeat(100));
    old.close();

    const store = openSqliteStore({ filename: file });
    try {
      expect(await store.queueHeld({ queueId })).toEqual({ messages: 2, bytes: 6 + 100 });
      await messageSend(store, {
        queueId,
        messages: [{ messageId: "m3", body: "abc", attributes: {}, systemAttributes: {}, bodyMd5: "900150983cd24fb0d6963f7d28e17f72", sentAtMs: 2, visibleAtMs: 2, priority: 0, senderId: "s" }],
      });
      expect(await store.queueHeld({ queueId })).toEqual({ messages: 3, bytes: 109 });
      expect((await store.messagePeek({ queueId, minSentAtMs: 0, limit: 10 })).map((m) => m.body).sort()).toEqual(["abc", "héllo", "x".repeat(100)]);
    } finally {
      await store.close();
    }
    expect(pageSizeOf(file)).toBe(4096);
  });

  it("migration 047 indexes by send time only the messages whose visibility moved off it, and retention reaches all", async () => {
    const dir = tempDir();
    const old = databaseBefore(dir, 47);
    old.prepare("INSERT INTO queues (account, name, config, tags, created_at_ms, updated_at_ms) VALUES ('', 'q', ?, '{}', 1, 1)").run(JSON.stringify(defaultQueueConfig(false)));
    const queueId = old.prepare<[], number>("SELECT id FROM queues WHERE name = 'q'").pluck().get()!;
    const insert = old.prepare(
      "INSERT INTO messages (queue_id, message_id, body, body_md5, sent_at_ms, visible_at_ms, priority, sender_id, receive_count) VALUES (?, ?, ?, 'md5', ?, ?, 0, 's', ?)",
    );
    insert.run(queueId, "queued", "queued", 1_000, 1_000, 0);
    insert.run(queueId, "in flight", "in flight", 1_000, 90_000, 1);
    insert.run(queueId, "fresh", "fresh", 10_000, 10_000, 0);
    old.close();

    const store = openSqliteStore({ filename: join(dir, "sluice.db") });
    try {
      const indexed = store.db.prepare<[number], string>("SELECT message_id FROM messages INDEXED BY messages_sent_shifted WHERE queue_id = ? AND visible_at_ms <> sent_at_ms").pluck();
      expect(indexed.all(queueId)).toEqual(["in flight"]);
      expect((await store.queueStats({ queueId, nowMs: 20_000, minSentAtMs: 5_000 })).visible).toBe(1);
      expect(await store.messageExpire({ queueId, minSentAtMs: 5_000, nowMs: 20_000, limit: -1 })).toMatchObject({ deleted: 2 });
      expect((await store.messagePeek({ queueId, minSentAtMs: 0, limit: 10 })).map((m) => m.body)).toEqual(["fresh"]);
    } finally {
      await store.close();
    }
  });
});
