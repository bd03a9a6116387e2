/** A row of the webhook_outbox table, as both stores read it, and core's record of it. */
import type { WebhookDelivery, WebhookDeliveryStatus } from "../../core/job-store.js";
import type { JobEventType, JobRecord } from "../../core/job.js";

export interface OutboxRow {
  seq: number;
  id: string;
  job_id: string;
  event: string;
  url: string;
  job_snapshot: string;
  status: string;
  attempts: number;
  created_at_ms: number;
  next_attempt_at_ms: number | null;
  last_attempt_at_ms: number | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at_ms: number | null;
}

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

export function toDelivery(row: OutboxRow): WebhookDelivery {
  return {
    id: row.id,
    jobId: row.job_id,
    event: row.event as JobEventType,
    url: row.url,
    job: JSON.parse(row.job_snapshot) as JobRecord,
    status: row.status as WebhookDeliveryStatus,
    attempts: row.attempts,
    createdAtMs: row.created_at_ms,
    nextAttemptAtMs: opt(row.next_attempt_at_ms),
    lastAttemptAtMs: opt(row.last_attempt_at_ms),
    lastStatusCode: opt(row.last_status_code),
    lastError: opt(row.last_error),
    deliveredAtMs: opt(row.delivered_at_ms),
  };
}

/** The job as an outbox row keeps it (job_snapshot): without its lease token, a worker's secret. */
export function outboxSnapshotJson(job: JobRecord): string {
  return JSON.stringify({ ...job, leaseToken: undefined });
}

/**
 * The columns a delivery attempt writes: delivered, failed for good (no next attempt) or pending
 * again until `nextAttemptAtMs`.
 */
export function deliveryAttemptOf(p: { nowMs: number; delivered: boolean; statusCode?: number; error?: string; nextAttemptAtMs?: number }): {
  status: WebhookDeliveryStatus;
  statusCode: number | null;
  error: string | null;
  nextAttemptAtMs: number | null;
  deliveredAtMs: number | null;
} {
  const status: WebhookDeliveryStatus = p.delivered ? "delivered" : p.nextAttemptAtMs === undefined ? "failed" : "pending";
  return { status, statusCode: p.statusCode ?? null, error: p.error ?? null, nextAttemptAtMs: status === "pending" ? p.nextAttemptAtMs! : null, deliveredAtMs: p.delivered ? p.nowMs : null };
}
