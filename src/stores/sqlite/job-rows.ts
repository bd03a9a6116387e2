/** The `jobs` table's rows and their mapping to core's JobRecord. */
import type { JobError, JobRecord, JobStatus, JobWebhook, OnParentFailure } from "../../core/job.js";

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
  cancel_requested: number;
  lease_token: string | null;
  lease_seconds: number | null;
  lease_expires_at_ms: number | null;
  deadline_at_ms: number | null;
  available_at_ms: number | null;
  expires_at_ms: number | null;
  message_seq: number | null;
  tenant: string | null;
  depends_on: string | null;
  on_parent_failure: string | null;
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
] as const;

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

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
    cancelRequested: row.cancel_requested !== 0,
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
  };
}

/** Every column, `seq` first: the SELECT list of rows read as arrays (jobRowOf). */
export const jobSelectColumns = ["seq", ...jobColumns] as const;

type JobColumn = (typeof jobSelectColumns)[number];
const at = Object.fromEntries(jobSelectColumns.map((c, i) => [c, i])) as Record<JobColumn, number>;

/**
 * A row read with better-sqlite3's `.raw()` (values in jobSelectColumns order) as a JobRow. Why
 * not plain object rows: better-sqlite3 builds those in C++, interning every column name and
 * setting each property through V8's runtime for every row, where this literal costs almost
 * nothing.
 */
export function jobRowOf(v: readonly unknown[]): JobRow {
  return {
    seq: v[at.seq] as number,
    id: v[at.id] as string,
    queue_id: v[at.queue_id] as number,
    queue_name: v[at.queue_name] as string,
    account: v[at.account] as string,
    status: v[at.status] as string,
    input: v[at.input] as string,
    output: v[at.output] as string | null,
    error: v[at.error] as string | null,
    attempt: v[at.attempt] as number,
    max_attempts: v[at.max_attempts] as number,
    priority: v[at.priority] as number,
    progress: v[at.progress] as number | null,
    created_at_ms: v[at.created_at_ms] as number,
    started_at_ms: v[at.started_at_ms] as number | null,
    finished_at_ms: v[at.finished_at_ms] as number | null,
    updated_at_ms: v[at.updated_at_ms] as number,
    idempotency_key: v[at.idempotency_key] as string | null,
    metadata: v[at.metadata] as string | null,
    timeout_seconds: v[at.timeout_seconds] as number | null,
    webhook: v[at.webhook] as string | null,
    cancel_requested: v[at.cancel_requested] as number,
    lease_token: v[at.lease_token] as string | null,
    lease_seconds: v[at.lease_seconds] as number | null,
    lease_expires_at_ms: v[at.lease_expires_at_ms] as number | null,
    deadline_at_ms: v[at.deadline_at_ms] as number | null,
    available_at_ms: v[at.available_at_ms] as number | null,
    expires_at_ms: v[at.expires_at_ms] as number | null,
    message_seq: v[at.message_seq] as number | null,
    tenant: v[at.tenant] as string | null,
    depends_on: v[at.depends_on] as string | null,
    on_parent_failure: v[at.on_parent_failure] as string | null,
  };
}

type JobValue = string | number | null;

/**
 * Positional parameters for `INSERT INTO jobs (jobColumns…)`. Positional, not `@name`: better-sqlite3
 * looks each named parameter up on the object in C++ for every row.
 */
export function jobInsertValues(job: Omit<JobRecord, "seq">): JobValue[] {
  const p = jobParams(job);
  return jobColumns.map((c) => p[c]);
}

/** Positional parameters for `UPDATE jobs SET (mutableJobColumns…) = … WHERE id = ?`. */
export function jobUpdateValues(job: Omit<JobRecord, "seq">): JobValue[] {
  const p = jobParams(job);
  const values: JobValue[] = mutableJobColumns.map((c) => p[c]);
  values.push(p.id);
  return values;
}

type MutableColumn = (typeof mutableJobColumns)[number];

/** Each mutable column's value in a record (what jobParams gives it). */
const mutableValue: Record<MutableColumn, (job: Omit<JobRecord, "seq">) => JobValue> = {
  status: (j) => j.status,
  output: (j) => j.outputJson ?? null,
  error: (j) => (j.error === undefined ? null : JSON.stringify(j.error)),
  attempt: (j) => j.attempt,
  progress: (j) => j.progress ?? null,
  started_at_ms: (j) => j.startedAtMs ?? null,
  finished_at_ms: (j) => j.finishedAtMs ?? null,
  updated_at_ms: (j) => j.updatedAtMs,
  cancel_requested: (j) => (j.cancelRequested ? 1 : 0),
  lease_token: (j) => j.leaseToken ?? null,
  lease_seconds: (j) => j.leaseSeconds ?? null,
  lease_expires_at_ms: (j) => j.leaseExpiresAtMs ?? null,
  deadline_at_ms: (j) => j.deadlineAtMs ?? null,
  available_at_ms: (j) => j.availableAtMs ?? null,
  expires_at_ms: (j) => j.expiresAtMs ?? null,
  message_seq: (j) => j.messageSeq ?? null,
};

/** Whether a mutable column's field differs between two records of a job (the error by identity: transitions replace it, never edit it). */
const differs: Record<MutableColumn, (a: Omit<JobRecord, "seq">, b: Omit<JobRecord, "seq">) => boolean> = {
  status: (a, b) => a.status !== b.status,
  output: (a, b) => a.outputJson !== b.outputJson,
  error: (a, b) => a.error !== b.error,
  attempt: (a, b) => a.attempt !== b.attempt,
  progress: (a, b) => a.progress !== b.progress,
  started_at_ms: (a, b) => a.startedAtMs !== b.startedAtMs,
  finished_at_ms: (a, b) => a.finishedAtMs !== b.finishedAtMs,
  updated_at_ms: (a, b) => a.updatedAtMs !== b.updatedAtMs,
  cancel_requested: (a, b) => a.cancelRequested !== b.cancelRequested,
  lease_token: (a, b) => a.leaseToken !== b.leaseToken,
  lease_seconds: (a, b) => a.leaseSeconds !== b.leaseSeconds,
  lease_expires_at_ms: (a, b) => a.leaseExpiresAtMs !== b.leaseExpiresAtMs,
  deadline_at_ms: (a, b) => a.deadlineAtMs !== b.deadlineAtMs,
  available_at_ms: (a, b) => a.availableAtMs !== b.availableAtMs,
  expires_at_ms: (a, b) => a.expiresAtMs !== b.expiresAtMs,
  message_seq: (a, b) => a.messageSeq !== b.messageSeq,
};

/**
 * The mutable columns a transition changed, as a bit set over mutableJobColumns (0: none), and
 * their values in that order with the job's id last: the parameters of jobUpdateOf(mask). Only
 * those are written, so an index on a column that didn't change is left alone.
 */
export function jobChangeOf(before: Omit<JobRecord, "seq">, after: Omit<JobRecord, "seq">): { mask: number; values: JobValue[] } {
  let mask = 0;
  const values: JobValue[] = [];
  for (let i = 0; i < mutableJobColumns.length; i++) {
    const column = mutableJobColumns[i]!;
    if (!differs[column](before, after)) continue;
    mask |= 1 << i;
    values.push(mutableValue[column](after));
  }
  values.push(after.id);
  return { mask, values };
}

/** `UPDATE jobs SET …` of the columns in `mask` (jobChangeOf), by id. */
export function jobUpdateSql(mask: number): string {
  const set = mutableJobColumns.filter((_c, i) => (mask & (1 << i)) !== 0).map((c) => `${c} = ?`);
  return `UPDATE jobs SET ${set.join(", ")} WHERE id = ?`;
}

/** Every column's value, by column name. */
function jobParams(job: Omit<JobRecord, "seq">): Record<(typeof jobColumns)[number], JobValue> {
  return {
    id: job.id,
    queue_id: job.queueId,
    queue_name: job.queueName,
    account: job.account ?? "",
    status: job.status,
    input: job.inputJson,
    output: job.outputJson ?? null,
    error: job.error === undefined ? null : JSON.stringify(job.error),
    attempt: job.attempt,
    max_attempts: job.maxAttempts,
    priority: job.priority,
    progress: job.progress ?? null,
    created_at_ms: job.createdAtMs,
    started_at_ms: job.startedAtMs ?? null,
    finished_at_ms: job.finishedAtMs ?? null,
    updated_at_ms: job.updatedAtMs,
    idempotency_key: job.idempotencyKey ?? null,
    metadata: job.metadataJson ?? null,
    timeout_seconds: job.timeoutSeconds ?? null,
    webhook: job.webhook === undefined ? null : JSON.stringify(job.webhook),
    cancel_requested: job.cancelRequested ? 1 : 0,
    lease_token: job.leaseToken ?? null,
    lease_seconds: job.leaseSeconds ?? null,
    lease_expires_at_ms: job.leaseExpiresAtMs ?? null,
    deadline_at_ms: job.deadlineAtMs ?? null,
    available_at_ms: job.availableAtMs ?? null,
    expires_at_ms: job.expiresAtMs ?? null,
    message_seq: job.messageSeq ?? null,
    tenant: job.tenant ?? null,
    depends_on: job.dependsOn === undefined ? null : JSON.stringify(job.dependsOn),
    on_parent_failure: job.onParentFailure ?? null,
  };
}
