/**
 * `sluice.queue(name)`: submit jobs to one queue, list them, and run workers on it.
 */
import type { AttachmentSource } from "./attachment-source.js";
import { JobHandle } from "./job-handle.js";
import type { StreamOptions } from "./job-stream.js";
import { type ClientContext, type JobPage, type JobsClient, type ListOptions, type WaitOptions, checkTimeoutMs, isTerminal, maxWaitSliceSeconds } from "./jobs.js";
import type { BatchHandler, BatchOptions, ErasedHandler, JobHandler } from "./handlers.js";
import { type SubmitBatcher, type SubmitEntry, type Submitted, submitAlone } from "./submit-batcher.js";
import { Worker } from "./worker.js";
import type { WorkerOptions } from "./worker-options.js";
import type { Job, JsonValue, OnParentFailure, WebhookSpec } from "./wire.js";

export interface SubmitOptions {
  /**
   * Makes the submit safe to repeat: the same key and body give back the same job. When omitted
   * the SDK sends a random key of its own, so its own retries after a dropped connection never
   * create a second job (as Stripe's SDKs do).
   */
  idempotencyKey?: string;
  /** 0–9, higher first. */
  priority?: number;
  delaySeconds?: number;
  /** When the job may first run (up to 365 days ahead), instead of `delaySeconds`; a past time runs it now. */
  runAt?: Date | string;
  timeoutSeconds?: number;
  maxAttempts?: number;
  webhook?: WebhookSpec;
  metadata?: Record<string, JsonValue>;
  /** Who the job is for (a customer, an API key): the server shares the queue fairly between tenants. */
  tenant?: string;
  /** Labels a worker must carry to run the job, e.g. `{ gpu: "a100" }`: only a worker whose `labels` contain every pair leases it. */
  requires?: Record<string, string>;
  /** Ids of jobs that must succeed first: the job waits (`waiting`), and its handler sees their outputs (`job.parents`). */
  dependsOn?: string[];
  /** What a failed or canceled parent does: `fail` (default) ends this job too; `ignore` runs it anyway. */
  onParentFailure?: OnParentFailure;
  /**
   * Files for the job, by name (at most 16; names 1–64 of [A-Za-z0-9._-]): each uploaded before
   * the submit (streamed: a `{ path }` or a stream is never read whole into memory); an
   * Attachment or `{ blobId }` is reused as it is. The worker reads them as `ctx.attachments.<name>`.
   */
  attachments?: Readonly<Record<string, AttachmentSource>>;
}

/** Options of `queue.run()`: a submit's options plus a wait's. */
export type RunOptions = SubmitOptions & WaitOptions;

export class QueueClient {
  constructor(
    private readonly ctx: ClientContext,
    private readonly jobs: JobsClient,
    readonly name: string,
    /** Gathers this turn's submits into one request; undefined: each submit is its own request. */
    private readonly batcher: SubmitBatcher | undefined,
  ) {}

  async submit<I = JsonValue, O = JsonValue>(input: I, opts: SubmitOptions = {}): Promise<JobHandle<I, O>> {
    const uploading = this.upload(opts, undefined);
    const blobIds = uploading && (await uploading);
    const { job, replayed } = await this.send(this.entry(input, opts, blobIds), 0, undefined);
    return new JobHandle<I, O>(this.jobs, this.jobs.adopt(job as Job<I, O>), replayed);
  }

  /**
   * Submits and resolves with the finished job (succeeded, failed or canceled) — in one request
   * when the job finishes within a minute: the server holds the submit's answer (`?wait=`), then,
   * if it must, the SDK long-polls as `handle.wait()` does. Throws JobWaitTimeoutError (with the
   * job's last state) when `timeoutMs` passes first; the job itself keeps going.
   */
  async run<I = JsonValue, O = JsonValue>(input: I, opts: RunOptions = {}): Promise<Job<I, O>> {
    const { timeoutMs, signal, ...submitOptions } = opts;
    // Before the submit: a caller who already gave up, or gave a bad timeout, must not create a job.
    signal?.throwIfAborted();
    checkTimeoutMs(timeoutMs);
    const { timers } = this.ctx;
    // One clock read: a second one a millisecond later would cut a second off the hold, and the
    // run() calls of one turn would no longer share one batch (it groups them by hold).
    const startMs = timers.nowMs();
    const deadlineMs = timeoutMs === undefined ? Infinity : startMs + timeoutMs;
    // Whole seconds only, rounded down: the server's hold must never outlast our deadline.
    const holdSeconds = Math.min(maxWaitSliceSeconds, Math.floor((deadlineMs - startMs) / 1000));
    const uploading = this.upload(submitOptions, signal);
    const blobIds = uploading && (await uploading);
    const job = (await this.send(this.entry(input, submitOptions, blobIds), Math.max(0, holdSeconds), signal)).job as Job<I, O>;
    if (isTerminal(job)) return this.jobs.adopt(job);
    const remainingMs = deadlineMs - timers.nowMs();
    return this.jobs.wait<I, O>(job.id, { signal, ...(Number.isFinite(remainingMs) ? { timeoutMs: Math.max(0, remainingMs) } : {}) });
  }

  /**
   * Submits and streams the job's output (`for await (const token of queue.stream(prompt))`),
   * ending when the job ends; throws the job's error (JobFailedError) if it fails.
   */
  async *stream<Chunk = JsonValue, I = JsonValue>(input: I, opts: SubmitOptions & StreamOptions = {}): AsyncGenerator<Chunk, void, undefined> {
    const { signal, onNewAttempt, ...submitOptions } = opts;
    const handle = await this.submit<I>(input, submitOptions);
    yield* handle.stream<Chunk>({ signal, onNewAttempt });
  }

  private send(entry: SubmitEntry, waitSeconds: number, signal: AbortSignal | undefined): Promise<Submitted> {
    return this.batcher ? this.batcher.submit(entry, waitSeconds, signal) : submitAlone(this.ctx, this.name, entry, waitSeconds, signal);
  }

  /**
   * The submit's body, with its idempotency key — a key of our own only when we may resend: it
   * makes a retried submit safe, and with no retries it would cost the server a fingerprint and a
   * key row for nothing.
   */
  /**
   * The attachments uploaded, as blob ids; undefined (and no await, so the submits of one turn
   * still share a batch) without any.
   */
  private upload(opts: SubmitOptions, signal: AbortSignal | undefined): Promise<Record<string, string>> | undefined {
    return opts.attachments !== undefined ? this.jobs.blobs.uploadAll(opts.attachments, "submit", signal) : undefined;
  }

  private entry<I>(input: I, opts: SubmitOptions, blobIds: Record<string, string> | undefined): SubmitEntry {
    const { idempotencyKey, runAt, attachments: _sources, ...rest } = opts;
    const key = idempotencyKey ?? (this.ctx.attempts > 1 ? `sdk-${globalThis.crypto.randomUUID()}` : undefined);
    const when = runAt instanceof Date ? runAtOfDate(runAt) : runAt;
    return {
      input: input as JsonValue,
      ...definedOnly(rest),
      ...(when !== undefined ? { runAt: when } : {}),
      ...(key !== undefined ? { idempotencyKey: key } : {}),
      ...(blobIds !== undefined ? { attachments: blobIds } : {}),
    };
  }

  list<I = JsonValue, O = JsonValue>(opts?: ListOptions): Promise<JobPage<I, O>> {
    return this.jobs.list<I, O>(this.name, opts);
  }

  /**
   * Starts a worker on this queue at once. With `batch`, the handler gets an array of jobs and
   * returns one result per job; without, it gets one job and returns its output.
   */
  work<I = JsonValue, O = JsonValue>(handler: BatchHandler<I, O>, opts: WorkerOptions & { batch: BatchOptions }): Worker;
  work<I = JsonValue, O = JsonValue>(handler: JobHandler<I, O>, opts?: WorkerOptions & { batch?: undefined }): Worker;
  work<I = JsonValue, O = JsonValue>(handler: JobHandler<I, O> | BatchHandler<I, O>, opts: WorkerOptions = {}): Worker {
    // The job's input arrives as JSON; the caller's I is their promise about its shape.
    const erased: ErasedHandler = opts.batch ? { batch: handler as unknown as BatchHandler } : { one: handler as unknown as JobHandler<JsonValue, unknown> };
    return new Worker(this.ctx.http, this.name, erased, opts, this.ctx.timers);
  }
}

/** An invalid Date is refused here: toISOString would throw a bare RangeError from inside the submit. */
function runAtOfDate(d: Date): string {
  if (Number.isNaN(d.getTime())) throw new TypeError("runAt is an invalid Date");
  return d.toISOString();
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
