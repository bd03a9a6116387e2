/**
 * Migrations 016 and 017 (queues and move tasks get an account) on a database written before
 * them: every queue, message, job, tombstone and move task is kept and belongs to the server's own
 * account (""), queue ids are never reused, foreign keys still cascade, and triggers other
 * migrations put on the queues table survive the table's rebuild.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, migrationsDir } from "../../src/stores/sqlite/migrate.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A database file at migration 015, where 015 is another migration's trigger on queues. */
function databaseBefore016(): { db: Database.Database; migrations: string } {
  const root = mkdtempSync(join(tmpdir(), "sluice-acct-mig-"));
  dirs.push(root);
  const migrations = join(root, "migrations");
  mkdirSync(migrations);
  for (const file of readdirSync(migrationsDir()).filter((f) => /^\d+_.+\.sql$/.test(f) && Number.parseInt(f, 10) <= 14)) {
    copyFileSync(join(migrationsDir(), file), join(migrations, file));
  }
  writeFileSync(
    join(migrations, "015_queue_insert_log.sql"),
    `CREATE TABLE queue_insert_log (queue_id INTEGER NOT NULL);
     CREATE TRIGGER queue_insert_logged AFTER INSERT ON queues BEGIN INSERT INTO queue_insert_log VALUES (new.id); END;`,
  );
  const filename = join(root, "sluice.db");
  const db = new Database(filename);
  db.pragma("foreign_keys = ON");
  migrate(db, migrations);
  return { db, migrations };
}

describe("migrations 016 and 017: queues and move tasks belong to accounts", () => {
  it("keeps every queue, message, job and tombstone in the server's own account; ids are never reused", () => {
    const { db, migrations } = databaseBefore016();
    const insertQueue = db.prepare("INSERT INTO queues (name, config, tags, created_at_ms, updated_at_ms, purged_at_ms) VALUES (?, '{}', '{\"t\":\"v\"}', 1, 2, 3)");
    const a = Number(insertQueue.run("a").lastInsertRowid);
    const gone = Number(insertQueue.run("gone").lastInsertRowid);
    db.prepare("DELETE FROM queues WHERE id = ?").run(gone); // the AUTOINCREMENT high-water mark is now above max(id)
    db.prepare("INSERT INTO queue_tombstones (name, deleted_at_ms) VALUES ('gone', 9)").run();
    db.prepare(
      `INSERT INTO messages (queue_id, message_id, body, body_md5, sent_at_ms, visible_at_ms, priority, sender_id) VALUES (?, 'm1', 'hello', 'x', 1, 1, 0, 's')`,
    ).run(a);
    db.prepare(
      `INSERT INTO jobs (id, queue_id, queue_name, status, input, attempt, max_attempts, priority, created_at_ms, updated_at_ms) VALUES ('job-1', ?, 'a', 'queued', '{}', 0, 3, 0, 1, 1)`,
    ).run(a);
    db.prepare("INSERT INTO move_tasks (task_handle, source_queue, status, to_move_count, started_at_ms, updated_at_ms) VALUES ('t1', 'a', 'RUNNING', 1, 1, 1)").run();

    for (const file of ["016_queue_accounts.sql", "017_move_task_accounts.sql"]) copyFileSync(join(migrationsDir(), file), join(migrations, file));
    expect(migrate(db, migrations)).toEqual(["016_queue_accounts.sql", "017_move_task_accounts.sql"]);

    expect(db.prepare("SELECT id, account, name, tags, created_at_ms, updated_at_ms, purged_at_ms FROM queues").all()).toEqual([
      { id: a, account: "", name: "a", tags: '{"t":"v"}', created_at_ms: 1, updated_at_ms: 2, purged_at_ms: 3 },
    ]);
    expect(db.prepare("SELECT account, name, deleted_at_ms FROM queue_tombstones").all()).toEqual([{ account: "", name: "gone", deleted_at_ms: 9 }]);
    expect(db.prepare("SELECT body FROM messages").pluck().all()).toEqual(["hello"]);
    expect(db.prepare("SELECT id FROM jobs").pluck().all()).toEqual(["job-1"]);
    expect(db.prepare("SELECT account, source_queue FROM move_tasks").all()).toEqual([{ account: "", source_queue: "a" }]);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    // A new queue gets an id above every id there ever was, and the other migration's trigger still fires.
    const next = Number(db.prepare("INSERT INTO queues (account, name, config, tags, created_at_ms, updated_at_ms) VALUES ('222222222222', 'a', '{}', '{}', 1, 1)").run().lastInsertRowid);
    expect(next).toBe(gone + 1);
    expect(db.prepare("SELECT queue_id FROM queue_insert_log ORDER BY queue_id").pluck().all()).toEqual([a, gone, next]);
    expect(() => db.prepare("INSERT INTO queues (account, name, config, tags, created_at_ms, updated_at_ms) VALUES ('', 'a', '{}', '{}', 1, 1)").run()).toThrow(/UNIQUE/);
    // Deleting a queue still takes its messages' jobs with it (jobs.queue_id cascades to the new table).
    db.prepare("DELETE FROM queues WHERE id = ?").run(a);
    expect(db.prepare("SELECT count(*) FROM jobs").pluck().get()).toBe(0);
    db.close();
  });

  it("a migration whose rebuild breaks a foreign key changes nothing", () => {
    const { db, migrations } = databaseBefore016();
    const q = Number(db.prepare("INSERT INTO queues (name, config, tags, created_at_ms, updated_at_ms) VALUES ('q', '{}', '{}', 1, 1)").run().lastInsertRowid);
    db.prepare(`INSERT INTO jobs (id, queue_id, queue_name, status, input, attempt, max_attempts, priority, created_at_ms, updated_at_ms) VALUES ('job-1', ?, 'q', 'queued', '{}', 0, 3, 0, 1, 1)`).run(q);
    writeFileSync(join(migrations, "016_lose_queues.sql"), "-- rebuilds: queues\nDELETE FROM sqlite_sequence WHERE name = 'queues';\nCREATE TABLE queues_new (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, config TEXT NOT NULL, tags TEXT NOT NULL, created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL, purged_at_ms INTEGER);\nDROP TABLE queues;\nALTER TABLE queues_new RENAME TO queues;\n");
    expect(() => migrate(db, migrations)).toThrow(/foreign key/);
    expect(db.prepare("SELECT name FROM queues").pluck().all()).toEqual(["q"]);
    expect(db.prepare("SELECT id FROM jobs").pluck().all()).toEqual(["job-1"]);
    expect(db.pragma("foreign_keys", { simple: true })).toBe(1);
    db.close();
  });
});
