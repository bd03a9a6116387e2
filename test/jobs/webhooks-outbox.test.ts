/**
 * The webhook outbox's table across migration 011: rows survive their job's deletion (a deleted
 * queue's pending deliveries still go out), an existing database keeps every row it had, and
 * finished deliveries still leave with their job as they did under the old cascade.
 */
import Database from "better-sqlite3";
import { copyFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, migrationsDir } from "../../src/stores/sqlite/migrate.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterEach(removeTempDirs);

const outboxColumns = "seq, id, job_id, event, url, job_snapshot, status, attempts, created_at_ms, next_attempt_at_ms, last_attempt_at_ms, last_status_code, last_error, delivered_at_ms";

/** A database as a server before migration 011 left it. */
async function databaseAt010(): Promise<Database.Database> {
  const dir = await makeTempDir("sluice-migrations-010-");
  for (const file of readdirSync(migrationsDir()).filter((f) => /^\d+_.+\.sql$/.test(f) && Number.parseInt(f, 10) <= 10)) {
    copyFileSync(join(migrationsDir(), file), join(dir, file));
  }
  const db = new Database(":memory:");
  db.pragma("foreign_keys = ON");
  migrate(db, dir);
  return db;
}

function insertQueueAndJob(db: Database.Database, queue: string, jobId: string): number {
  const queueId = Number(db.prepare("INSERT INTO queues (name, config, tags, created_at_ms, updated_at_ms) VALUES (?, '{}', '{}', 1, 1)").run(queue).lastInsertRowid);
  db.prepare(
    `INSERT INTO jobs (id, queue_id, queue_name, status, input, attempt, max_attempts, priority, created_at_ms, updated_at_ms)
     VALUES (?, ?, ?, 'succeeded', '{}', 1, 3, 0, 1, 1)`,
  ).run(jobId, queueId, queue);
  return queueId;
}

function insertDelivery(db: Database.Database, id: string, jobId: string, status: "pending" | "delivered" | "failed"): void {
  db.prepare(
    `INSERT INTO webhook_outbox (id, job_id, event, url, job_snapshot, status, attempts, created_at_ms, next_attempt_at_ms, last_status_code, delivered_at_ms)
     VALUES (?, ?, 'job.succeeded', 'https://example.com/h', '{"id":"x"}', ?, 1, 5, ?, ?, ?)`,
  ).run(id, jobId, status, status === "pending" ? 9 : null, status === "pending" ? 503 : 200, status === "delivered" ? 7 : null);
}

describe("webhook outbox (migration 011)", () => {
  it("an existing database keeps every outbox row, its indexes and its seq order; the cascade from jobs is gone", async () => {
    const db = await databaseAt010();
    insertQueueAndJob(db, "q", "job-1");
    insertDelivery(db, "msg_a", "job-1", "delivered");
    insertDelivery(db, "msg_b", "job-1", "pending");
    insertDelivery(db, "msg_c", "job-1", "pending");
    db.prepare("DELETE FROM webhook_outbox WHERE id = 'msg_c'").run(); // the AUTOINCREMENT high-water mark (3) is now above max(seq)
    const before = db.prepare(`SELECT ${outboxColumns} FROM webhook_outbox ORDER BY seq`).all();
    expect(db.pragma("foreign_key_list(webhook_outbox)")).toHaveLength(1);

    migrate(db);

    expect(db.prepare(`SELECT ${outboxColumns} FROM webhook_outbox ORDER BY seq`).all()).toEqual(before);
    expect(db.pragma("foreign_key_list(webhook_outbox)")).toEqual([]);
    const indexes = (db.pragma("index_list(webhook_outbox)") as Array<{ name: string }>).map((i) => i.name);
    expect(indexes).toEqual(expect.arrayContaining(["webhook_outbox_due", "webhook_outbox_job"]));
    // seq is never reused (list order): a new row comes after every row there ever was.
    insertDelivery(db, "msg_d", "job-1", "pending");
    expect(db.prepare("SELECT seq FROM webhook_outbox WHERE id = 'msg_d'").pluck().get()).toBe(4);
    expect(db.prepare("SELECT name FROM sqlite_sequence WHERE name LIKE 'webhook_outbox%'").pluck().all()).toEqual(["webhook_outbox"]);
    db.close();
  });

  it("a deleted queue's jobs leave their pending deliveries behind and take their finished ones", async () => {
    const db = await databaseAt010();
    migrate(db);
    const queueId = insertQueueAndJob(db, "q", "job-1");
    insertDelivery(db, "msg_pending", "job-1", "pending");
    insertDelivery(db, "msg_delivered", "job-1", "delivered");
    insertDelivery(db, "msg_failed", "job-1", "failed");
    db.prepare("DELETE FROM queues WHERE id = ?").run(queueId); // cascades to jobs, as DeleteQueue does
    expect(db.prepare("SELECT count(*) FROM jobs").pluck().get()).toBe(0);
    expect(db.prepare("SELECT id FROM webhook_outbox").pluck().all()).toEqual(["msg_pending"]);
    db.close();
  });

  it("a pruned job takes its finished deliveries with it, as the cascade did", async () => {
    const db = await databaseAt010();
    migrate(db);
    insertQueueAndJob(db, "q", "job-1");
    insertQueueAndJob(db, "r", "job-2");
    insertDelivery(db, "msg_1", "job-1", "delivered");
    insertDelivery(db, "msg_2", "job-2", "delivered");
    db.prepare("DELETE FROM jobs WHERE id = 'job-1'").run();
    expect(db.prepare("SELECT id FROM webhook_outbox").pluck().all()).toEqual(["msg_2"]);
    db.close();
  });
});
