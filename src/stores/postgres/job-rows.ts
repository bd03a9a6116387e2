/** The `jobs` table's rows and their mapping to core's JobRecord, for PostgreSQL. */
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
  cancel_requested: boolean;
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
}

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
    cancelRequested: row.cancel_requested,
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

type Value = string | number | boolean | null;

/** Columns written at insert, with their types (for unnest), and each one's value from a record. */
const insertColumns: Array<[string, string, (j: Omit<JobRecord, "seq">) => Value]> = [
  ["id", "text", (j) => j.id],
  ["queue_id", "bigint", (j) => j.queueId],
  ["queue_name", "text", (j) => j.queueName],
  ["account", "text", (j) => j.account ?? ""],
  ["status", "text", (j) => j.status],
  ["input", "text", (j) => j.inputJson],
  ["output", "text", (j) => j.outputJson ?? null],
  ["error", "text", (j) => (j.error === undefined ? null : JSON.stringify(j.error))],
  ["attempt", "integer", (j) => j.attempt],
  ["max_attempts", "integer", (j) => j.maxAttempts],
  ["priority", "integer", (j) => j.priority],
  ["progress", "double precision", (j) => j.progress ?? null],
  ["created_at_ms", "bigint", (j) => j.createdAtMs],
  ["started_at_ms", "bigint", (j) => j.startedAtMs ?? null],
  ["finished_at_ms", "bigint", (j) => j.finishedAtMs ?? null],
  ["updated_at_ms", "bigint", (j) => j.updatedAtMs],
  ["idempotency_key", "text", (j) => j.idempotencyKey ?? null],
  ["metadata", "text", (j) => j.metadataJson ?? null],
  ["timeout_seconds", "integer", (j) => j.timeoutSeconds ?? null],
  ["webhook", "text", (j) => (j.webhook === undefined ? null : JSON.stringify(j.webhook))],
  ["cancel_requested", "boolean", (j) => j.cancelRequested],
  ["lease_token", "text", (j) => j.leaseToken ?? null],
  ["lease_seconds", "integer", (j) => j.leaseSeconds ?? null],
  ["lease_expires_at_ms", "bigint", (j) => j.leaseExpiresAtMs ?? null],
  ["deadline_at_ms", "bigint", (j) => j.deadlineAtMs ?? null],
  ["available_at_ms", "bigint", (j) => j.availableAtMs ?? null],
  ["expires_at_ms", "bigint", (j) => j.expiresAtMs ?? null],
  ["message_seq", "bigint", (j) => j.messageSeq ?? null],
  ["tenant", "text", (j) => j.tenant ?? null],
  ["depends_on", "text", (j) => (j.dependsOn === undefined ? null : JSON.stringify(j.dependsOn))],
  ["on_parent_failure", "text", (j) => j.onParentFailure ?? null],
];

/** The columns a transition may change (the rest are fixed at submit). */
const mutable = new Set([
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
]);
const updateColumns = insertColumns.filter(([name]) => mutable.has(name));

function arraysOf(columns: typeof insertColumns, jobs: ReadonlyArray<Omit<JobRecord, "seq">>): Value[][] {
  return columns.map(([, , value]) => jobs.map(value));
}

const insertHead = `INSERT INTO jobs (${insertColumns.map(([n]) => n).join(", ")})
  SELECT ${insertColumns.map(([n]) => `t.${n}`).join(", ")}
  FROM unnest(${insertColumns.map(([, type], i) => `$${i + 1}::${type}[]`).join(", ")}) WITH ORDINALITY AS t (${insertColumns.map(([n]) => n).join(", ")}, ord)
  ORDER BY t.ord`;

/** `INSERT INTO jobs … RETURNING seq, id` for many records, in their order; values from jobInsertValues. */
export const jobInsertStatement = `${insertHead} RETURNING seq, id`;

/** The same, leaving out ids that exist already (two nodes adopting one message). */
export const jobInsertNewStatement = `${insertHead} ON CONFLICT (id) DO NOTHING RETURNING seq, id`;

export function jobInsertValues(jobs: ReadonlyArray<Omit<JobRecord, "seq">>): Value[][] {
  return arraysOf(insertColumns, jobs);
}

/** One UPDATE of every changed column for many jobs, by id; each job's version goes up by one. */
export const jobUpdateStatement = `UPDATE jobs SET ${updateColumns.map(([n]) => `${n} = t.${n}`).join(", ")}, version = jobs.version + 1
  FROM unnest($1::text[], ${updateColumns.map(([, type], i) => `$${i + 2}::${type}[]`).join(", ")}) AS t (id, ${updateColumns.map(([n]) => n).join(", ")})
  WHERE jobs.id = t.id
  RETURNING jobs.id, jobs.version, EXISTS (SELECT 1 FROM job_dependencies d WHERE d.parent_id = jobs.id) AS has_children`;

/**
 * What jobUpdateStatement returns: each updated job's new version, and whether jobs depend on it
 * (read in the UPDATE's own snapshot, taken after the caller locked the row: a child submitted
 * while the caller waited for that lock is seen).
 */
export interface JobVersionRow {
  id: string;
  version: number;
  has_children: boolean;
}

export function jobUpdateValues(jobs: ReadonlyArray<Omit<JobRecord, "seq">>): Value[][] {
  return [jobs.map((j) => j.id), ...arraysOf(updateColumns, jobs)];
}
