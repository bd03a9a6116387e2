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

/**
 * Every column but the input and the output, read as one JSON array (jobSelectSql): better-sqlite3
 * hands a raw row to JS one value at a time through V8's API, dearer per value than parsing them
 * all from one string. The input and output stay apart: JSON already, and often large, so
 * escaping them into the array and parsing them back out would cost more than it saves.
 */
export const packedJobColumns = jobSelectColumns.filter((c) => c !== "input" && c !== "output");

/** The SELECT list of a job row over `jobs` (the input read where it is kept): [packed columns, input, output]. */
export const jobSelectSql = `json_array(${packedJobColumns.join(", ")}), ${jobInputSql("jobs")}, output`;

type PackedColumn = (typeof packedJobColumns)[number];
const at = Object.fromEntries(packedJobColumns.map((c, i) => [c, i])) as Record<PackedColumn, number>;

/** A row read with jobSelectSql and better-sqlite3's `.raw()` as a JobRow. */
export function jobRowOf(v: readonly unknown[]): JobRow {
  const p = JSON.parse(v[0] as string) as unknown[];
  return {
    seq: p[at.seq] as number,
    id: p[at.id] as string,
    queue_id: p[at.queue_id] as number,
    queue_name: p[at.queue_name] as string,
    account: p[at.account] as string,
    status: p[at.status] as string,
    input: v[1] as string,
    output: v[2] as string | null,
    error: p[at.error] as string | null,
    attempt: p[at.attempt] as number,
    max_attempts: p[at.max_attempts] as number,
    priority: p[at.priority] as number,
    progress: p[at.progress] as number | null,
    created_at_ms: p[at.created_at_ms] as number,
    started_at_ms: p[at.started_at_ms] as number | null,
    finished_at_ms: p[at.finished_at_ms] as number | null,
    updated_at_ms: p[at.updated_at_ms] as number,
    idempotency_key: p[at.idempotency_key] as string | null,
    metadata: p[at.metadata] as string | null,
    timeout_seconds: p[at.timeout_seconds] as number | null,
    webhook: p[at.webhook] as string | null,
    cancel_requested: p[at.cancel_requested] as number,
    lease_token: p[at.lease_token] as string | null,
    lease_seconds: p[at.lease_seconds] as number | null,
    lease_expires_at_ms: p[at.lease_expires_at_ms] as number | null,
    deadline_at_ms: p[at.deadline_at_ms] as number | null,
    available_at_ms: p[at.available_at_ms] as number | null,
    expires_at_ms: p[at.expires_at_ms] as number | null,
    message_seq: p[at.message_seq] as number | null,
    tenant: p[at.tenant] as string | null,
    depends_on: p[at.depends_on] as string | null,
    on_parent_failure: p[at.on_parent_failure] as string | null,
    requires: p[at.requires] as string | null,
    traceparent: p[at.traceparent] as string | null,
    tracestate: p[at.tracestate] as string | null,
    attachments: p[at.attachments] as string | null,
    output_attachments: p[at.output_attachments] as string | null,
  };
}


/**
 * Positional parameters for `INSERT INTO jobs (jobColumns…)`. Positional, not `@name`: better-sqlite3
 * looks each named parameter up on the object in C++ for every row. Pass them spread (`run(...v)`):
 * an array argument is read element by element through V8's API, several times dearer per value.
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

