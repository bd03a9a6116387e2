/** A batch line joined with its job (`batch_jobs` LEFT JOIN `jobs`), as both stores read it, as core's BatchJobRow. */
import type { BatchJobRow } from "../../core/batches/batch.js";

export interface BatchJobRowOut {
  line: number;
  custom_id: string;
  job_id: string;
  /** Null once the job is pruned (the LEFT JOIN finds none). */
  status: string | null;
  output: string | null;
  error: string | null;
}

export function toBatchJobRow(r: BatchJobRowOut): BatchJobRow {
  const row: BatchJobRow = { line: r.line, customId: r.custom_id, jobId: r.job_id };
  if (r.status !== null) row.status = r.status;
  if (r.output !== null) row.outputJson = r.output;
  if (r.error !== null) row.errorJson = r.error;
  return row;
}

/** A batch's lines counted by their job's status (`SELECT j.status, count(*) AS n … GROUP BY j.status`), `missing` for a pruned job. */
export function batchJobCountsOf(rows: Iterable<{ status: string | null; n: number }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) out[r.status ?? "missing"] = r.n;
  return out;
}
