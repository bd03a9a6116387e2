/** How the SQLite store reads and writes `jobs` rows: as arrays, by position, only what changed. */
import type { JobRecord } from "../../core/job.js";
import { type JobRow, type JobValue, type MutableJobColumn, jobColumnValue, jobColumns, mutableJobColumns } from "../codecs/job-row.js";


/** Every column, `seq` first: the SELECT list of rows read as arrays (jobRowOf). */
export const jobSelectColumns = ["seq", ...jobColumns] as const;

/** Where jobInsertValues puts the input. */
export const jobInputIndex = jobColumns.indexOf("input");

/**
 * A job's input as a SELECT reads it from `jobs` row `alias`: a job with requires keeps it in
 * job_inputs, its row holding '' (migration 052 says why).
 */
export function jobInputSql(alias: string): string {
  return `CASE ${alias}.input WHEN '' THEN (SELECT input FROM job_inputs WHERE job_inputs.seq = ${alias}.seq) ELSE ${alias}.input END`;
}

/** jobSelectColumns as a SELECT list over `jobs` (the input read where it is kept). */
export const jobSelectSql = jobSelectColumns.map((c) => (c === "input" ? jobInputSql("jobs") : c)).join(", ");

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
    requires: v[at.requires] as string | null,
    traceparent: v[at.traceparent] as string | null,
    tracestate: v[at.tracestate] as string | null,
    attachments: v[at.attachments] as string | null,
    output_attachments: v[at.output_attachments] as string | null,
  };
}


/**
 * Positional parameters for `INSERT INTO jobs (jobColumns…)`. Positional, not `@name`: better-sqlite3
 * looks each named parameter up on the object in C++ for every row.
 */
export function jobInsertValues(job: Omit<JobRecord, "seq">): JobValue[] {
  return jobColumns.map((c) => jobColumnValue[c](job));
}

/** Positional parameters for `UPDATE jobs SET (mutableJobColumns…) = … WHERE id = ?`. */
export function jobUpdateValues(job: Omit<JobRecord, "seq">): JobValue[] {
  const values: JobValue[] = mutableJobColumns.map((c) => jobColumnValue[c](job));
  values.push(job.id);
  return values;
}



/** Whether a mutable column's field differs between two records of a job (the error by identity: transitions replace it, never edit it). */
const differs: Record<MutableJobColumn, (a: Omit<JobRecord, "seq">, b: Omit<JobRecord, "seq">) => boolean> = {
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
  output_attachments: (a, b) => a.outputAttachmentsJson !== b.outputAttachmentsJson,
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
    values.push(jobColumnValue[column](after));
  }
  values.push(after.id);
  return { mask, values };
}

/** `UPDATE jobs SET …` of the columns in `mask` (jobChangeOf), by id. */
export function jobUpdateSql(mask: number): string {
  const set = mutableJobColumns.filter((_c, i) => (mask & (1 << i)) !== 0).map((c) => `${c} = ?`);
  return `UPDATE jobs SET ${set.join(", ")} WHERE id = ?`;
}

