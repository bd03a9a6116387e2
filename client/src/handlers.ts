/**
 * What a worker runs: the handler types `queue.work()` accepts, and calling one — a throw turned
 * into a value, a batch given its shared context.
 */
import type { BatchItemError } from "./errors.js";
import type { JobContext, JobLease } from "./job-lease.js";
import type { HandlerResult } from "./outcomes.js";
import type { JsonValue, LeasedJob } from "./wire.js";

/** A handler for one job at a time; its return value is the job's output. */
export type JobHandler<I = JsonValue, O = JsonValue> = (job: LeasedJob<I>, ctx: JobContext) => O | Promise<O>;

/** Per-position result of a batch handler: the job's output, or a BatchItemError to fail that job alone. */
export type BatchResult<O = JsonValue> = O | BatchItemError;

export interface BatchContext {
  /** Aborted when every job of the batch is canceled or lost, or close() runs out of time. */
  readonly signal: AbortSignal;
  /** One context per job, in the same order as the jobs: per-job signal and progress. */
  readonly items: readonly JobContext[];
  /** Records the same progress (0–1) on every job of the batch. */
  progress(fraction: number): void;
}

/**
 * A handler for a batch of up to `batch.size` jobs gathered within `batch.windowMs` (the pattern
 * for embedding models). Return one result per job, in order; throwing fails the whole batch.
 */
export type BatchHandler<I = JsonValue, O = JsonValue> = (jobs: LeasedJob<I>[], ctx: BatchContext) => BatchResult<O>[] | Promise<BatchResult<O>[]>;

export interface BatchOptions {
  /** Most jobs per batch (1–100). */
  size: number;
  /** How long the server gathers jobs after the first one arrives. */
  windowMs: number;
}

/**
 * The handler as the worker holds it: its input and output types erased (they matter to the
 * caller of queue.work(), which checks them), so every Worker is the same type.
 */
export type ErasedHandler = { one: JobHandler<JsonValue, unknown> } | { batch: BatchHandler<JsonValue, unknown> };

/** Runs a handler, turning both a throw and a rejection into a value (a sync throw included). */
export async function settle<T>(fn: () => T | Promise<T>): Promise<HandlerResult<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The context a batch handler gets for these leases. */
export function batchContext(leases: readonly JobLease[]): BatchContext {
  return {
    signal: allAborted(leases.map((l) => l.signal)),
    items: leases.map((l) => l.context),
    progress: (value) => leases.forEach((l) => l.context.progress(value)),
  };
}

/** A signal that aborts once every one of `signals` has aborted. */
function allAborted(signals: AbortSignal[]): AbortSignal {
  const controller = new AbortController();
  const check = (): void => {
    if (!controller.signal.aborted && signals.every((s) => s.aborted)) controller.abort(signals[signals.length - 1]!.reason);
  };
  for (const s of signals) s.addEventListener("abort", check, { once: true });
  check();
  return controller.signal;
}
