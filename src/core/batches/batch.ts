/**
 * Files and batches of the OpenAI-compatible Batch API (docs/jobs-api.md, "Batch API"): plain
 * records the store keeps whole (as JSON) beside the columns it indexes.
 */

/** A stored file: its bytes are the store's chunks 0…chunks-1, in order. */
export interface FileRecord {
  /** `file-…`. */
  id: string;
  /** The owning account; set only when it isn't the server's own (""). */
  account?: string;
  filename: string;
  purpose: string;
  bytes: number;
  chunks: number;
  /** Lines in the file (newline-terminated, or a last line without one). */
  lines: number;
  createdAtMs: number;
  /** `uploading` while its chunks are written: not answered, deleted by nobody but its writer. */
  status: "uploading" | "processed";
}

export const batchStatuses = ["validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling", "cancelled"] as const;
export type BatchStatus = (typeof batchStatuses)[number];

/** Done: nothing moves it any more. */
export function isBatchDone(status: BatchStatus): boolean {
  return status === "failed" || status === "completed" || status === "expired" || status === "cancelled";
}

/** One problem with the input file, as OpenAI reports it in `errors.data`. */
export interface BatchLineError {
  code: string;
  message: string;
  /** 1-based line of the input file. */
  line?: number;
  param?: string;
}

export interface BatchRecord {
  /** `batch_…`. */
  id: string;
  account?: string;
  /** Bumped by every write: each write is a compare-and-set on it. */
  version: number;
  endpoint: string;
  inputFileId: string;
  completionWindow: string;
  metadata?: Record<string, string>;
  /** Where its jobs go: metadata.queue, else `batch`. */
  queueName: string;
  status: BatchStatus;
  errors?: BatchLineError[];
  outputFileId?: string;
  errorFileId?: string;
  /** The input file passed validation (counts.total is its requests). */
  validated?: boolean;
  /** The last line of the input file made a job so far: a restart resumes after it. */
  submittedLines: number;
  /** Every line was made a job. */
  submitted?: boolean;
  counts: { total: number; completed: number; failed: number };
  /** A cancel or the completion window's end is stopping it: its live jobs are canceled, then it finalizes. */
  ending?: "cancel" | "expire";
  /** Its live jobs were all asked to cancel. */
  endingSwept?: boolean;
  /** A node finalizing it holds it until then (others leave it be; a crash lets it lapse). */
  claimUntilMs?: number;
  createdAtMs: number;
  expiresAtMs: number;
  inProgressAtMs?: number;
  finalizingAtMs?: number;
  completedAtMs?: number;
  failedAtMs?: number;
  expiredAtMs?: number;
  cancellingAtMs?: number;
  cancelledAtMs?: number;
}

/** A line of a batch and its job, as the store joins them (the job's columns absent once it was pruned). */
export interface BatchJobRow {
  line: number;
  customId: string;
  jobId: string;
  status?: string;
  outputJson?: string;
  errorJson?: string;
}
