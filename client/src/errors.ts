/**
 * Errors the SDK throws, and errors a handler throws to tell the worker what to do with a job.
 */
import type { Job, JobError } from "./wire.js";

/** The server answered with `{"error":{"code","message"}}`; `code` is stable, match on it. */
export class SluiceApiError extends Error {
  override readonly name = "SluiceApiError";
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The server could not be reached (refused, reset, timed out) even after the SDK's retries. */
export class SluiceNetworkError extends Error {
  override readonly name = "SluiceNetworkError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** `job.wait({ timeoutMs })` ran out of time; `job` is the last state seen (not terminal). */
export class JobWaitTimeoutError extends Error {
  override readonly name = "JobWaitTimeoutError";
  constructor(readonly job: Job) {
    super(`job ${job.id} is still ${job.status} after the wait timeout`);
  }
}

/**
 * How a thrown error asks the worker to report its job. Carried under a registry symbol rather
 * than checked with instanceof, so it works when the handler module and the worker load two
 * copies of this package (a user's dependency and the CLI's).
 */
export interface FailureDirective {
  retryable: boolean;
  retryAfterSeconds?: number;
}

const directiveKey = Symbol.for("@sluice/client.failureDirective");
const batchItemKey = Symbol.for("@sluice/client.batchItemError");

export function failureDirectiveOf(err: unknown): FailureDirective | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const d = (err as { [directiveKey]?: unknown })[directiveKey];
  return typeof d === "object" && d !== null && typeof (d as FailureDirective).retryable === "boolean" ? (d as FailureDirective) : undefined;
}

export function isBatchItemError(value: unknown): value is BatchItemError {
  return typeof value === "object" && value !== null && (value as { [batchItemKey]?: unknown })[batchItemKey] === true;
}

/** The fail route's limit on a retry delay (12 h, as SQS's visibility timeout). */
const maxRetryAfterSeconds = 43_200;

/**
 * A retry delay the server would refuse is refused here, where it is made: sent along, it would
 * get the job's whole report refused and the handler's error lost.
 */
function checkRetryAfter(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > maxRetryAfterSeconds) {
    throw new RangeError(`retryAfterSeconds must be a whole number of seconds in 0–${maxRetryAfterSeconds}, got ${String(value)} (round it up: Math.ceil)`);
  }
  return value;
}

/** Throw from a handler to fail the job at once: no retry, straight to `failed` (and the DLQ). */
export class NonRetryableError extends Error {
  override readonly name: string = "NonRetryableError";
  readonly [directiveKey]: FailureDirective = { retryable: false };
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Throw from a handler to retry the job after a chosen delay (e.g. a rate limit's Retry-After).
 * Any other error is retried too, after the queue's backoff. `retryAfterSeconds` must be a whole
 * number in 0–43200: anything else throws a RangeError here (which, thrown from a handler, is
 * itself retried after the queue's backoff, with that message as the job's error).
 */
export class RetryableError extends Error {
  override readonly name: string = "RetryableError";
  readonly retryAfterSeconds: number | undefined;
  readonly [directiveKey]: FailureDirective;
  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = checkRetryAfter(options?.retryAfterSeconds);
    this[directiveKey] = { retryable: true, ...(this.retryAfterSeconds !== undefined ? { retryAfterSeconds: this.retryAfterSeconds } : {}) };
  }
}

/**
 * Put one of these in a batch handler's result array, at a job's position, to fail that job
 * alone while the rest of the batch completes. `retryAfterSeconds` as for RetryableError.
 */
export class BatchItemError extends Error {
  override readonly name = "BatchItemError";
  readonly retryable: boolean;
  readonly retryAfterSeconds: number | undefined;
  readonly [directiveKey]: FailureDirective;
  readonly [batchItemKey] = true;
  constructor(message: string, options?: { retryable?: boolean; retryAfterSeconds?: number; cause?: unknown }) {
    super(message, options);
    this.retryable = options?.retryable ?? true;
    this.retryAfterSeconds = checkRetryAfter(options?.retryAfterSeconds);
    this[directiveKey] = { retryable: this.retryable, ...(this.retryAfterSeconds !== undefined ? { retryAfterSeconds: this.retryAfterSeconds } : {}) };
  }
}

/** What `job.stream()` and `queue.stream()` throw when the job failed: its error and last state. */
export class JobFailedError extends Error {
  override readonly name = "JobFailedError";
  readonly jobId: string;
  /** The job's last error (`type` as the worker or server gave it). */
  readonly error: JobError | null;
  constructor(readonly job: Job<unknown, unknown>) {
    super(`job ${job.id} failed${job.error ? `: ${job.error.message}` : ""}`);
    this.jobId = job.id;
    this.error = job.error;
  }
}

/** `ctx.signal.reason` when the job's cancel was requested; what `job.stream()` throws when the job was canceled. */
export class JobCanceledError extends Error {
  override readonly name = "JobCanceledError";
  constructor(readonly jobId: string) {
    super(`job ${jobId} was canceled`);
  }
}

/** `ctx.signal.reason` when the worker no longer holds the job's lease (it expired or was taken). */
export class LeaseLostError extends Error {
  override readonly name = "LeaseLostError";
  constructor(
    readonly jobId: string,
    readonly code: string,
  ) {
    super(`lost the lease on job ${jobId} (${code})`);
  }
}

/** `ctx.signal.reason` when `worker.close({ timeoutMs })` ran out of patience. */
export class WorkerClosingError extends Error {
  override readonly name = "WorkerClosingError";
  constructor() {
    super("the worker is closing and its drain timeout passed");
  }
}
