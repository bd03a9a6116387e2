/**
 * The webhook outbox in SQLite. Rows are inserted by job transitions (inside their transaction);
 * the dispatcher claims due rows — pushing their next attempt ahead, so a crash mid-delivery
 * retries later and two dispatchers never send the same row at once — and records each attempt.
 * A row holds its own snapshot of the job, so it is delivered even when its job was deleted
 * meanwhile (with its queue): pending rows outlive their job (migration 011).
 */
import type Database from "better-sqlite3";
import type { WebhookDelivery, WebhookOutboxStore } from "../../core/job-store.js";
import type { NewWebhookDelivery } from "../../core/jobs/transitions.js";
import { type OutboxRow, deliveryAttemptOf, outboxSnapshotJson, toDelivery } from "../codecs/webhook-outbox-row.js";
import { boundLimit } from "./bound-limit.js";
import type { GroupCommitter } from "./group-commit.js";

export class SqliteWebhookOutbox implements WebhookOutboxStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly writes: GroupCommitter,
  ) {
    this.sql = {
      insert: db.prepare(
        `INSERT INTO webhook_outbox (id, job_id, event, url, job_snapshot, status, created_at_ms, next_attempt_at_ms)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
      ),
      due: db.prepare<[number, number], OutboxRow>(
        `SELECT * FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at_ms <= ? ORDER BY next_attempt_at_ms, seq ${boundLimit()}`,
      ),
      claim: db.prepare<[number, number]>("UPDATE webhook_outbox SET next_attempt_at_ms = ? WHERE seq = ?"),
      nextDue: db.prepare<[], number | null>("SELECT min(next_attempt_at_ms) FROM webhook_outbox WHERE status = 'pending'").pluck(),
      record: db.prepare(
        `UPDATE webhook_outbox SET attempts = attempts + 1, last_attempt_at_ms = @nowMs, last_status_code = @statusCode,
           last_error = @error, status = @status, next_attempt_at_ms = @nextAttemptAtMs, delivered_at_ms = @deliveredAtMs
         WHERE id = @id AND status = 'pending'`,
      ),
      // A row outlives its job (migration 011) only to be delivered: once finished, nothing can
      // read it any more (GET /v1/jobs/{id} is a 404), so it goes.
      dropIfJobGone: db.prepare<[string]>(
        "DELETE FROM webhook_outbox WHERE id = ? AND status <> 'pending' AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = webhook_outbox.job_id)",
      ),
      byJob: db.prepare<[string], OutboxRow>("SELECT * FROM webhook_outbox WHERE job_id = ? ORDER BY seq"),
    };
  }

  /** Inside a job transition's write: one row per subscribed event (core's webhookDeliveriesOf), snapshotting the job. */
  insert({ job, event, id }: NewWebhookDelivery, nowMs: number): void {
    this.sql.insert.run(id, job.id, event, job.webhook!.url, outboxSnapshotJson(job), nowMs, nowMs);
  }

  /** Due rows, each claimed until `nowMs + claimMs` and answered as claimed. */
  webhookDeliveryClaim(p: { nowMs: number; limit: number; claimMs: number }): Promise<WebhookDelivery[]> {
    return this.writes.run(() => {
      const rows = this.sql.due.all(p.nowMs, p.limit);
      for (const row of rows) this.sql.claim.run((row.next_attempt_at_ms = p.nowMs + p.claimMs), row.seq);
      return rows.map(toDelivery);
    });
  }

  async webhookDeliveryNextDueAt(): Promise<number | undefined> {
    return this.sql.nextDue.get() ?? undefined;
  }

  async webhookDeliveryRecord(p: { id: string; nowMs: number; delivered: boolean; statusCode?: number; error?: string; nextAttemptAtMs?: number }): Promise<void> {
    await this.writes.run(() => {
      const attempt = deliveryAttemptOf(p);
      this.sql.record.run({ id: p.id, nowMs: p.nowMs, ...attempt });
      if (attempt.status !== "pending") this.sql.dropIfJobGone.run(p.id);
    });
  }

  async webhookDeliveryList(p: { jobId: string }): Promise<WebhookDelivery[]> {
    return this.sql.byJob.all(p.jobId).map(toDelivery);
  }
}
