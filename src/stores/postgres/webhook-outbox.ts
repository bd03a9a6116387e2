/**
 * The webhook outbox in PostgreSQL. Rows are inserted by job transitions (inside their
 * transaction); any node's dispatcher claims due rows with SKIP LOCKED — pushing their next
 * attempt ahead, so a node that dies mid-delivery leaves them to be retried by another node after
 * the claim, and two nodes never send one row at once — and records each attempt.
 */
import type { WebhookDelivery, WebhookOutboxStore } from "../../core/job-store.js";
import type { NewWebhookDelivery } from "../../core/jobs/transitions.js";
import { type OutboxRow, deliveryAttemptOf, outboxSnapshotJson, toDelivery } from "../codecs/webhook-outbox-row.js";
import type { Db, Queryable } from "./db.js";

/** Inside a job transition's transaction: one row per subscribed event, snapshotting the job. */
export async function outboxInsert(tx: Queryable, entries: readonly NewWebhookDelivery[], nowMs: number): Promise<void> {
  if (entries.length === 0) return;
  await tx.query(
    `INSERT INTO webhook_outbox (id, job_id, event, url, job_snapshot, status, created_at_ms, next_attempt_at_ms)
     SELECT t.id, t.job_id, t.event, t.url, t.snapshot, 'pending', $6, $6
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS t (id, job_id, event, url, snapshot, ord) ORDER BY t.ord`,
    [
      entries.map((e) => e.id),
      entries.map((e) => e.job.id),
      entries.map((e) => e.event),
      entries.map((e) => e.job.webhook!.url),
      entries.map((e) => outboxSnapshotJson(e.job)),
      nowMs,
    ],
  );
}

/** The outbox's reads and a dispatcher's claims and attempts (JobStore's webhookDelivery* calls). */
export class PostgresWebhookOutbox implements WebhookOutboxStore {
  constructor(private readonly db: Db) {}

  /** Due rows, oldest first, each claimed until `nowMs + claimMs`. */
  async webhookDeliveryClaim(p: { nowMs: number; limit: number; claimMs: number }): Promise<WebhookDelivery[]> {
    const { rows } = await this.db.query<OutboxRow & { due_at_ms: number }>(
      `WITH due AS (
         SELECT seq, next_attempt_at_ms AS due_at_ms FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at_ms <= $1
         ORDER BY next_attempt_at_ms, seq LIMIT $2 FOR UPDATE SKIP LOCKED)
       UPDATE webhook_outbox o SET next_attempt_at_ms = $3 FROM due WHERE o.seq = due.seq RETURNING o.*, due.due_at_ms`,
      [p.nowMs, p.limit, p.nowMs + p.claimMs],
    );
    rows.sort((a, b) => a.due_at_ms - b.due_at_ms || a.seq - b.seq);
    // As claimed: the next attempt is the claim's end (what the row says now).
    return rows.map(toDelivery);
  }

  async webhookDeliveryNextDueAt(): Promise<number | undefined> {
    const { rows } = await this.db.query<{ at: number | null }>("SELECT min(next_attempt_at_ms) AS at FROM webhook_outbox WHERE status = 'pending'");
    return rows[0]?.at ?? undefined;
  }

  async webhookDeliveryRecord(p: { id: string; nowMs: number; delivered: boolean; statusCode?: number; error?: string; nextAttemptAtMs?: number }): Promise<void> {
    const a = deliveryAttemptOf(p);
    await this.db.query(
      `UPDATE webhook_outbox SET attempts = attempts + 1, last_attempt_at_ms = $2, last_status_code = $3, last_error = $4, status = $5,
         next_attempt_at_ms = $6, delivered_at_ms = $7 WHERE id = $1 AND status = 'pending'`,
      [p.id, p.nowMs, a.statusCode, a.error, a.status, a.nextAttemptAtMs, a.deliveredAtMs],
    );
    // A row outlives its job only to be delivered: once finished, nothing can read it any more.
    if (a.status !== "pending") {
      await this.db.query("DELETE FROM webhook_outbox o WHERE o.id = $1 AND o.status <> 'pending' AND NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = o.job_id)", [p.id]);
    }
  }

  async webhookDeliveryList(p: { jobId: string }): Promise<WebhookDelivery[]> {
    const { rows } = await this.db.query<OutboxRow>("SELECT * FROM webhook_outbox WHERE job_id = $1 ORDER BY seq", [p.jobId]);
    return rows.map(toDelivery);
  }
}
