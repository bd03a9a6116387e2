/**
 * A worker's options: what `queue.work()` and `close()` accept, and their checked, defaulted form.
 * Out-of-range values throw at once (RangeError), before anything is leased.
 */
import { BlobTransfer } from "./blob-transfer.js";
import type { BatchOptions } from "./handlers.js";
import type { LeaseDeps, WorkerPhase } from "./job-lease.js";
import type { HttpClient } from "./http.js";
import type { Timers } from "./timers.js";
import type { OpenTelemetryApi } from "./tracing.js";

export interface WorkerOptions {
  /** Handlers (or batches) running at once. Default 1. */
  concurrency?: number;
  /** Lease length; heartbeats extend it every third of it. Default 30. */
  leaseSeconds?: number;
  /** Long-poll length of one lease request (0–20). Default 20. */
  waitSeconds?: number;
  batch?: BatchOptions;
  /**
   * The worker's labels, e.g. `{ gpu: "a100", region: "eu" }`: besides jobs without `requires`,
   * it leases the jobs whose `requires` these contain. Default: none.
   */
  labels?: Record<string, string>;
  /** Names the worker in `GET /v1/workers`. Default: one id per process (processWorkerId()). */
  workerId?: string;
  /**
   * The `@opentelemetry/api` module (`import * as otel from "@opentelemetry/api"`): each handler
   * then runs in a span that is the job's submit's child. The SDK depends on no package itself.
   */
  opentelemetry?: OpenTelemetryApi;
  /** Aborting it closes the worker (as close() with no timeout). */
  signal?: AbortSignal;
  /** Called on errors the worker survives (server unreachable, lost leases). Default: console.error. */
  onError?: (err: unknown, where: { phase: WorkerPhase; jobId?: string }) => void;
  timers?: Timers;
  random?: () => number;
}

export interface CloseOptions {
  /**
   * After this long, abort every running handler's ctx.signal, hand its job back (through fail:
   * the attempt counts, as the handler ran) and stop waiting for it: whatever it returns later is
   * ignored. Default: wait as long as it takes.
   */
  timeoutMs?: number;
}

/** The options a running worker works from: checked, with their defaults filled in. */
export interface ResolvedWorkerOptions {
  concurrency: number;
  waitSeconds: number;
  labels?: Record<string, string>;
  workerId: string;
  /** What every JobLease of the worker shares. */
  deps: LeaseDeps;
}

export function resolveWorkerOptions(opts: WorkerOptions, http: HttpClient, defaultTimers: Timers): ResolvedWorkerOptions {
  const concurrency = checkInt("concurrency", opts.concurrency ?? 1, 1, 10_000);
  const waitSeconds = checkInt("waitSeconds", opts.waitSeconds ?? 20, 0, 20);
  const leaseSeconds = checkInt("leaseSeconds", opts.leaseSeconds ?? 30, 1, 43_200);
  if (opts.batch) {
    checkInt("batch.size", opts.batch.size, 1, 100);
    checkInt("batch.windowMs", opts.batch.windowMs, 0, 10_000);
  }
  if (opts.labels !== undefined) checkLabels(opts.labels);
  const workerId = opts.workerId ?? processWorkerId();
  if (typeof workerId !== "string" || workerId.length < 1 || workerId.length > 128) throw new RangeError(`workerId must be a string of 1–128 characters, got ${JSON.stringify(workerId)}`);
  return {
    concurrency,
    waitSeconds,
    ...(opts.labels !== undefined && Object.keys(opts.labels).length > 0 ? { labels: opts.labels } : {}),
    workerId,
    deps: {
      http,
      transfer: new BlobTransfer(http, 5),
      timers: opts.timers ?? defaultTimers,
      random: opts.random ?? Math.random,
      leaseSeconds,
      onError: opts.onError ?? defaultOnError,
    },
  };
}

let workerIdOfProcess: string | undefined;

/** This process's worker id: made once, shared by every worker it runs that was not given one. */
export function processWorkerId(): string {
  return (workerIdOfProcess ??= `worker-${globalThis.crypto.randomUUID().slice(0, 8)}`);
}

/** The shape the server takes (it checks each key's alphabet and length, and answers a 400). */
function checkLabels(labels: Record<string, string>): void {
  if (labels === null || typeof labels !== "object" || Array.isArray(labels)) throw new TypeError("labels must be an object of string values");
  const entries = Object.entries(labels);
  if (entries.length > 16) throw new RangeError(`labels has ${entries.length} pairs; at most 16 are allowed`);
  for (const [key, value] of entries) if (typeof value !== "string") throw new TypeError(`labels.${key} must be a string`);
}

function checkInt(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer in ${min}–${max}, got ${value}`);
  return value;
}

function defaultOnError(err: unknown, where: { phase: WorkerPhase; jobId?: string }): void {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`[sluice worker] ${where.phase}${where.jobId ? ` ${where.jobId}` : ""}: ${message}`);
}
