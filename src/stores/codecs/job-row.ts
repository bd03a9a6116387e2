/**
 * The `jobs` table's rows, as both stores read and write them, and their mapping to and from
 * core's JobRecord. Each store keeps its own SQL (and how it reads rows); the mapping is here.
 */
import { type JobError, type JobRecord, type JobStatus, type JobWebhook, type OnParentFailure, jobStatuses } from "../../core/job.js";
import type { JobLeaseParams } from "../../core/job-store.js";
import { requirementClassOf } from "../../core/jobs/requirements.js";
import { jobFromMessage } from "../../core/jobs/transitions.js";

export interface JobRow {
  seq: number;
  id: string;
  queue_id: number;
  queue_name: string;
  /** '' for the server's own account. */
  account: string;
  status: string;
  input: string;
  output: string | null;
  error: string | null;
  attempt: number;
  max_attempts: number;
  priority: number;
  progress: number | null;
  created_at_ms: number;
  started_at_ms: number | null;
  finished_at_ms: number | null;
  updated_at_ms: number;
  idempotency_key: string | null;
  metadata: string | null;
  timeout_seconds: number | null;
  webhook: string | null;
  /** PostgreSQL reads a boolean, SQLite 0 or 1. */
  cancel_requested: boolean | number;
  lease_token: string | null;
  lease_seconds: number | null;
  lease_expires_at_ms: number | null;
  deadline_at_ms: number | null;
  available_at_ms: number | null;
  expires_at_ms: number | null;
  message_seq: number | null;
  tenant: string | null;
  /** JSON array of parent job ids. */
  depends_on: string | null;
  on_parent_failure: string | null;
  /** The requirement class (core's requirements.ts): the job's requires as canonical JSON. */
  requires: string | null;
  /** The submit's W3C trace context (core's JobTrace), NULL when it sent none. */
  traceparent: string | null;
  tracestate: string | null;
  /** Attachments as core's JSON text (JobRecord.attachmentsJson, outputAttachmentsJson), NULL without any. */
  attachments: string | null;
  output_attachments: string | null;
}

export const jobColumns = [
  "id",
  "queue_id",
  "queue_name",
  "account",
  "status",
  "input",
  "output",
  "error",
  "attempt",
  "max_attempts",
  "priority",
  "progress",
  "created_at_ms",
  "started_at_ms",
  "finished_at_ms",
  "updated_at_ms",
  "idempotency_key",
  "metadata",
  "timeout_seconds",
  "webhook",
  "cancel_requested",
  "lease_token",
  "lease_seconds",
  "lease_expires_at_ms",
  "deadline_at_ms",
  "available_at_ms",
  "expires_at_ms",
  "message_seq",
  "tenant",
  "depends_on",
  "on_parent_failure",
  "requires",
  "traceparent",
  "tracestate",
  "attachments",
  "output_attachments",
] as const;

/** The columns a transition may change (the rest are fixed at submit). */
export const mutableJobColumns = [
  "status",
  "output",
  "error",
  "attempt",
  "progress",
  "started_at_ms",
  "finished_at_ms",
  "updated_at_ms",
  "cancel_requested",
  "lease_token",
  "lease_seconds",
  "lease_expires_at_ms",
  "deadline_at_ms",
  "available_at_ms",
  "expires_at_ms",
  "message_seq",
  "output_attachments",
] as const;

export type JobColumn = (typeof jobColumns)[number];
export type MutableJobColumn = (typeof mutableJobColumns)[number];

/** A column's value as bound to a statement (a flag as 0 or 1, which both databases take). */
export type JobValue = string | number | null;

/** Each column's value in a record. */
export const jobColumnValue: Record<JobColumn, (j: Omit<JobRecord, "seq">) => JobValue> = {
  id: (j) => j.id,
  queue_id: (j) => j.queueId,
  queue_name: (j) => j.queueName,
  account: (j) => j.account ?? "",
  status: (j) => j.status,
  input: (j) => j.inputJson,
  output: (j) => j.outputJson ?? null,
  error: (j) => j.error === undefined ? null : JSON.stringify(j.error),
  attempt: (j) => j.attempt,
  max_attempts: (j) => j.maxAttempts,
  priority: (j) => j.priority,
  progress: (j) => j.progress ?? null,
  created_at_ms: (j) => j.createdAtMs,
  started_at_ms: (j) => j.startedAtMs ?? null,
  finished_at_ms: (j) => j.finishedAtMs ?? null,
  updated_at_ms: (j) => j.updatedAtMs,
  idempotency_key: (j) => j.idempotencyKey ?? null,
  metadata: (j) => j.metadataJson ?? null,
  timeout_seconds: (j) => j.timeoutSeconds ?? null,
  webhook: (j) => j.webhook === undefined ? null : JSON.stringify(j.webhook),
  cancel_requested: (j) => j.cancelRequested ? 1 : 0,
  lease_token: (j) => j.leaseToken ?? null,
  lease_seconds: (j) => j.leaseSeconds ?? null,
  lease_expires_at_ms: (j) => j.leaseExpiresAtMs ?? null,
  deadline_at_ms: (j) => j.deadlineAtMs ?? null,
  available_at_ms: (j) => j.availableAtMs ?? null,
  expires_at_ms: (j) => j.expiresAtMs ?? null,
  message_seq: (j) => j.messageSeq ?? null,
  tenant: (j) => j.tenant ?? null,
  depends_on: (j) => j.dependsOn === undefined ? null : JSON.stringify(j.dependsOn),
  on_parent_failure: (j) => j.onParentFailure ?? null,
  requires: (j) => (j.requires === undefined ? null : requirementClassOf(j.requires)),
  traceparent: (j) => j.trace?.traceparent ?? null,
  tracestate: (j) => j.trace?.tracestate ?? null,
  attachments: (j) => j.attachmentsJson ?? null,
  output_attachments: (j) => j.outputAttachmentsJson ?? null,
};

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

/** Field for field in newJobRecord's order: every record shares one shape (job.ts says why). */
export function toJob(row: JobRow): JobRecord {
  return {
    id: row.id,
    seq: row.seq,
    queueId: row.queue_id,
    queueName: row.queue_name,
    account: row.account === "" ? undefined : row.account,
    status: row.status as JobStatus,
    inputJson: row.input,
    outputJson: opt(row.output),
    error: row.error === null ? undefined : (JSON.parse(row.error) as JobError),
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    priority: row.priority,
    progress: opt(row.progress),
    createdAtMs: row.created_at_ms,
    startedAtMs: opt(row.started_at_ms),
    finishedAtMs: opt(row.finished_at_ms),
    updatedAtMs: row.updated_at_ms,
    idempotencyKey: opt(row.idempotency_key),
    metadataJson: opt(row.metadata),
    timeoutSeconds: opt(row.timeout_seconds),
    webhook: row.webhook === null ? undefined : (JSON.parse(row.webhook) as JobWebhook),
    cancelRequested: row.cancel_requested === true || row.cancel_requested === 1,
    leaseToken: opt(row.lease_token),
    leaseSeconds: opt(row.lease_seconds),
    leaseExpiresAtMs: opt(row.lease_expires_at_ms),
    deadlineAtMs: opt(row.deadline_at_ms),
    availableAtMs: opt(row.available_at_ms),
    expiresAtMs: opt(row.expires_at_ms),
    messageSeq: opt(row.message_seq),
    tenant: opt(row.tenant),
    dependsOn: row.depends_on === null ? undefined : (JSON.parse(row.depends_on) as string[]),
    onParentFailure: opt(row.on_parent_failure) as OnParentFailure | undefined,
    requires: row.requires === null ? undefined : (JSON.parse(row.requires) as Record<string, string>),
    trace: row.traceparent === null ? undefined : row.tracestate === null ? { traceparent: row.traceparent } : { traceparent: row.traceparent, tracestate: row.tracestate },
    attachmentsJson: opt(row.attachments),
    outputAttachmentsJson: opt(row.output_attachments),
  };
}

/** A job queue's jobs counted by status, from `SELECT status, count(*) AS n … GROUP BY status`: every status, 0 where none. */
export function jobCountsOf(rows: Iterable<{ status: string; n: number }>): Record<JobStatus, number> {
  const counts = Object.fromEntries(jobStatuses.map((s) => [s, 0])) as Record<JobStatus, number>;
  for (const row of rows) counts[row.status as JobStatus] = row.n;
  return counts;
}

/** A job the sweep found past its deadline or lease (JobStore.jobListExpired). */
export function toExpiredJob(row: { id: string; queue_name: string; account: string }): { id: string; queueName: string; account?: string } {
  return { id: row.id, queueName: row.queue_name, ...(row.account === "" ? {} : { account: row.account }) };
}

/** The job a ready message without one becomes when a lease adopts it (core's jobFromMessage), `body` its message's. */
export function adoptedJobOf(row: { seq: number; message_id: string; priority: number; sent_at_ms: number }, body: string, p: JobLeaseParams): Omit<JobRecord, "seq"> {
  const message = { messageId: row.message_id, body, priority: row.priority, sentAtMs: row.sent_at_ms };
  return { ...jobFromMessage({ message, queueId: p.queueId, queueName: p.queueName, nowMs: p.nowMs, ...p.adopt }), messageSeq: row.seq };
}
