/** How the PostgreSQL store writes `jobs` rows: many at once, each column an unnest array. */
import type { JobRecord } from "../../core/job.js";
import { type JobColumn, type JobValue, jobColumnValue, jobColumns, mutableJobColumns } from "../codecs/job-row.js";

/** Each column's type, for unnest. */
const columnType: Record<JobColumn, string> = {
  id: "text",
  queue_id: "bigint",
  queue_name: "text",
  account: "text",
  status: "text",
  input: "text",
  output: "text",
  error: "text",
  attempt: "integer",
  max_attempts: "integer",
  priority: "integer",
  progress: "double precision",
  created_at_ms: "bigint",
  started_at_ms: "bigint",
  finished_at_ms: "bigint",
  updated_at_ms: "bigint",
  idempotency_key: "text",
  metadata: "text",
  timeout_seconds: "integer",
  webhook: "text",
  cancel_requested: "boolean",
  lease_token: "text",
  lease_seconds: "integer",
  lease_expires_at_ms: "bigint",
  deadline_at_ms: "bigint",
  available_at_ms: "bigint",
  expires_at_ms: "bigint",
  message_seq: "bigint",
  tenant: "text",
  depends_on: "text",
  on_parent_failure: "text",
  requires: "text",
  traceparent: "text",
  tracestate: "text",
  attachments: "text",
  output_attachments: "text",
};

/** Columns written at insert, with their types, and each one's value from a record. */
const insertColumns: Array<[string, string, (j: Omit<JobRecord, "seq">) => JobValue]> = jobColumns.map((c) => [c, columnType[c], jobColumnValue[c]]);
const mutable = new Set<string>(mutableJobColumns);
const updateColumns = insertColumns.filter(([name]) => mutable.has(name));

function arraysOf(columns: typeof insertColumns, jobs: ReadonlyArray<Omit<JobRecord, "seq">>): JobValue[][] {
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

export function jobInsertValues(jobs: ReadonlyArray<Omit<JobRecord, "seq">>): JobValue[][] {
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

export function jobUpdateValues(jobs: ReadonlyArray<Omit<JobRecord, "seq">>): JobValue[][] {
  return [jobs.map((j) => j.id), ...arraysOf(updateColumns, jobs)];
}
