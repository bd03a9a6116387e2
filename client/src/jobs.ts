/**
 * Reading and steering jobs by id: get, long-poll until terminal, cancel, list a queue's jobs.
 */
import { withAttachments } from "./attachment.js";
import type { BlobsClient } from "./blobs.js";
import { JobWaitTimeoutError } from "./errors.js";
import { type EventStreamOptions, eventStream } from "./event-stream.js";
import { type StreamOptions, jobOutput } from "./job-stream.js";
import type { HttpClient } from "./http.js";
import { jobPath, queuePath } from "./paths.js";
import type { Timers } from "./timers.js";
import { type Job, type JobEventMessage, type JobListResponse, type JobResponse, type JobStatus, type JsonValue, terminalStatuses } from "./wire.js";

/** The server holds one GET ?wait= (or submit ?wait=) at most this long (docs/jobs-api.md: `?wait=` 0–60 s). */
export const maxWaitSliceSeconds = 60;
/** Slack on top of a long poll before the SDK calls the connection dead. */
export const longPollGraceMs = 30_000;

export interface WaitOptions {
  /** Give up (JobWaitTimeoutError) after this long; wait forever when omitted. */
  timeoutMs?: number;
  /** Aborting it — or passing one already aborted — rejects the wait with the signal's reason. */
  signal?: AbortSignal;
}

export interface ListOptions {
  status?: JobStatus;
  limit?: number;
  cursor?: string;
}

/** One page of a queue's jobs, newest first. */
export interface JobPage<I = JsonValue, O = JsonValue> {
  jobs: Job<I, O>[];
  /** Pass back as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
}

export interface ClientContext {
  http: HttpClient;
  timers: Timers;
  /** Attempts for idempotent calls (GETs, cancel, submit with its key), the first included. */
  attempts: number;
}

/**
 * A `timeoutMs` must be a number: NaN (say, `Number(process.env.TIMEOUT)` of an unset variable)
 * would otherwise make a wait fail at once as a network timeout, `run()` submit and then wait
 * forever, and `close()` cut running handlers off at once. Infinity waits forever; a negative
 * one has already passed.
 */
export function checkTimeoutMs(timeoutMs: unknown): void {
  if (timeoutMs !== undefined && (typeof timeoutMs !== "number" || Number.isNaN(timeoutMs))) {
    throw new RangeError(`timeoutMs must be a number of milliseconds (Infinity to wait forever), got ${typeof timeoutMs === "string" ? JSON.stringify(timeoutMs) : String(timeoutMs)}`);
  }
}

export function isTerminal(job: Pick<Job, "status">): boolean {
  return terminalStatuses.has(job.status);
}

export class JobsClient {
  constructor(
    private readonly ctx: ClientContext,
    /** Reads the attachments of the jobs this client returns. */
    readonly blobs: BlobsClient,
  ) {}

  /** The job as the SDK returns it: its attachments as Attachments (their bytes a call away). */
  adopt<J extends Job<unknown, unknown>>(job: J): J {
    withAttachments(job, this.blobs.transfer);
    return job;
  }

  async get<I = JsonValue, O = JsonValue>(id: string, opts: { signal?: AbortSignal } = {}): Promise<Job<I, O>> {
    const res = await this.ctx.http.request<JobResponse<I, O>>("GET", jobPath(id), { signal: opts.signal, maxAttempts: this.ctx.attempts });
    return this.adopt(res.body.job);
  }

  /** Requests cancellation: a queued job is canceled at once, a running one when its worker sees it. */
  async cancel<I = JsonValue, O = JsonValue>(id: string): Promise<Job<I, O>> {
    const res = await this.ctx.http.request<JobResponse<I, O> | undefined>("POST", `${jobPath(id)}/cancel`, { maxAttempts: this.ctx.attempts });
    return res.body?.job ? this.adopt(res.body.job) : await this.get<I, O>(id);
  }

  /**
   * Long-polls until the job is terminal, in slices of at most 60 s (the server's limit), so one
   * wait can outlast any proxy's idle timeout. Throws JobWaitTimeoutError when `timeoutMs` passes.
   */
  async wait<I = JsonValue, O = JsonValue>(id: string, opts: WaitOptions = {}): Promise<Job<I, O>> {
    checkTimeoutMs(opts.timeoutMs);
    const { timers } = this.ctx;
    const deadlineMs = opts.timeoutMs === undefined ? Infinity : timers.nowMs() + opts.timeoutMs;
    for (;;) {
      // Checked on every slice: a signal aborted before its listener is added never fires it.
      opts.signal?.throwIfAborted();
      const remainingMs = deadlineMs - timers.nowMs();
      if (remainingMs <= 0) {
        const last = await this.get<I, O>(id, { signal: opts.signal });
        if (isTerminal(last)) return last;
        throw new JobWaitTimeoutError(last as Job);
      }
      const waitSeconds = Math.min(maxWaitSliceSeconds, Math.ceil(remainingMs / 1000));
      // The server counts whole seconds; cut the slice at our own deadline so timeoutMs is exact.
      const slice = new AbortController();
      const onOuterAbort = (): void => slice.abort(opts.signal?.reason);
      opts.signal?.addEventListener("abort", onOuterAbort, { once: true });
      const cancelDeadline = Number.isFinite(remainingMs) ? timers.schedule(remainingMs, () => slice.abort(deadlineReached)) : () => {};
      try {
        const res = await this.ctx.http.request<JobResponse<I, O>>("GET", jobPath(id), {
          query: { wait: waitSeconds },
          signal: slice.signal,
          maxAttempts: this.ctx.attempts,
          timeoutMs: waitSeconds * 1000 + longPollGraceMs,
        });
        if (isTerminal(res.body.job)) return this.adopt(res.body.job);
      } catch (err) {
        if (err !== deadlineReached) throw err;
      } finally {
        cancelDeadline();
        opts.signal?.removeEventListener("abort", onOuterAbort);
      }
    }
  }

  /**
   * The job's events: a `job.snapshot` of it first (unless resuming with `since`), then each
   * change; ends after its terminal event. Reconnects by itself and resumes where it was.
   */
  events<I = JsonValue, O = JsonValue>(id: string, opts: EventStreamOptions = {}): AsyncGenerator<JobEventMessage<I, O>, void, undefined> {
    return eventStream<I, O>(this.ctx.http, this.ctx.timers, `${jobPath(id)}/events`, {}, { ...opts, untilTerminal: true }, this.blobs.transfer);
  }

  /**
   * The job's streamed output (its worker's ctx.emit chunks), in order, from the first until the
   * job ends; throws JobFailedError / JobCanceledError if it fails or is canceled (see job-stream.ts).
   */
  stream<Chunk = JsonValue>(id: string, opts: StreamOptions = {}): AsyncGenerator<Chunk, void, undefined> {
    return jobOutput<Chunk>(this.ctx.http, id, this.events(id, { signal: opts.signal }), opts);
  }

  async list<I = JsonValue, O = JsonValue>(queue: string, opts: ListOptions = {}): Promise<JobPage<I, O>> {
    const res = await this.ctx.http.request<JobListResponse>("GET", `${queuePath(queue)}/jobs`, {
      query: { status: opts.status, limit: opts.limit, cursor: opts.cursor },
      maxAttempts: this.ctx.attempts,
    });
    return { jobs: res.body.jobs.map((job) => this.adopt(job as Job<I, O>)), nextCursor: res.body.nextCursor ?? null };
  }
}

/** A private sentinel: an abort caused by our own deadline, not by the caller. */
const deadlineReached = new Error("wait deadline reached");
