/**
 * How a handler's return value or thrown error becomes what the worker reports for each job.
 * One table of rules, so single and batch handlers fail jobs the same way.
 */
import { JobCanceledError, NonRetryableError, WorkerClosingError, failureDirectiveOf, isBatchItemError } from "./errors.js";
import type { JobOutcome } from "./job-lease.js";
import type { JsonValue } from "./wire.js";

export type HandlerResult<T> = { ok: true; value: T } | { ok: false; error: unknown };

interface LeaseView {
  /** Why the job's ctx.signal aborted (or will, once read), if it did. */
  readonly abortReason: unknown;
}

/** Limits of the fail route's error fields (docs/jobs-api.md). */
const maxErrorMessageChars = 8192;
const maxErrorTypeChars = 256;
/** The complete route keeps at most this many bytes of output JSON (docs/jobs-api.md: 1 MiB). */
export const maxOutputBytes = 1_048_576;

export function outcomeOf<O>(result: HandlerResult<O>, lease: LeaseView): JobOutcome {
  if (wasCanceled(lease)) return canceled(lease);
  if (result.ok) return completeWith(result.value);
  return failWith(result.error, lease);
}

export function outcomesOfBatch<O>(result: HandlerResult<unknown>, leases: readonly LeaseView[]): JobOutcome[] {
  return batchOutcomes<O>(result, leases).map((outcome, i) => (wasCanceled(leases[i]!) ? canceled(leases[i]!) : outcome));
}

/**
 * A job whose cancel was requested while it ran ends canceled, whatever the handler returned
 * (a handler that sees ctx.signal abort usually returns early with nothing useful): the fail
 * route turns it into `canceled` on the server.
 */
function wasCanceled(lease: LeaseView): boolean {
  return lease.abortReason instanceof JobCanceledError;
}

function canceled(lease: LeaseView): JobOutcome {
  return fail(lease.abortReason, false, undefined);
}

function batchOutcomes<O>(result: HandlerResult<unknown>, leases: readonly LeaseView[]): JobOutcome[] {
  if (!result.ok) return leases.map((l) => failWith(result.error, l));
  const values = result.value;
  if (!Array.isArray(values) || values.length !== leases.length) {
    const got = Array.isArray(values) ? `${values.length} results` : typeof values;
    const error = new Error(`batch handler returned ${got} for ${leases.length} jobs; it must return one result per job, in order`);
    return leases.map((l) => failWith(error, l));
  }
  return leases.map((l, i) => {
    const value: unknown = values[i];
    return isBatchItemError(value) ? failWith(value, l) : completeWith(value as O);
  });
}

function completeWith(value: unknown): JobOutcome {
  const output = value === undefined ? null : value;
  let json: string | undefined;
  try {
    // The server stores JSON: catch a BigInt or a cycle here, as the job's own failure.
    json = JSON.stringify(output) as string | undefined; // undefined for a function: sent as no output (null)
  } catch (err) {
    return fail(new NonRetryableError(`handler output is not JSON-serializable: ${(err as Error).message}`), false, undefined);
  }
  // Over the limit the server refuses the report, and would re-offer the job when the lease runs
  // out only to refuse it again: the same output every attempt. Failed now, with the reason.
  // UTF-8 takes at most 3 bytes per UTF-16 unit, so only a long string needs encoding to know.
  const units = json?.length ?? 0;
  const bytes = units * 3 <= maxOutputBytes ? units : new TextEncoder().encode(json).length;
  if (bytes > maxOutputBytes) return fail(new NonRetryableError(`handler output is ${bytes} bytes of JSON; a job's output is at most ${maxOutputBytes} (1 MiB)`), false, undefined);
  return { kind: "complete", output: output as JsonValue };
}

function failWith(error: unknown, lease: LeaseView): JobOutcome {
  // Cut short by close(): not the job's fault, so hand it back for another worker now.
  if (lease.abortReason instanceof WorkerClosingError) return fail(error, true, 0);
  const directive = failureDirectiveOf(error);
  if (directive) return fail(error, directive.retryable, directive.retryAfterSeconds);
  return fail(error, true, undefined);
}

function fail(error: unknown, retryable: boolean, retryAfterSeconds: number | undefined): JobOutcome {
  const message = error instanceof Error ? error.message : String(error);
  const type = error instanceof Error ? error.name : typeof error;
  return {
    kind: "fail",
    failure: {
      error: { message: (message || type).slice(0, maxErrorMessageChars), type: type.slice(0, maxErrorTypeChars) },
      retryable,
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
    },
  };
}
