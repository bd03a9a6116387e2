/**
 * One leased job inside a worker: keeps its lease alive with heartbeats at a third of the lease
 * (so a slow inference never times out while the worker lives), carries ctx.progress() to the
 * server, turns "cancel requested" or a lost lease into an aborted ctx.signal, and reports the
 * outcome (complete / fail / hand back) with retries that outlast a server restart.
 */
import { withAttachments } from "./attachment.js";
import type { Attachment } from "./attachment-shape.js";
import type { AttachmentSource } from "./attachment-source.js";
import { backoffDelayMs, defaultBackoff } from "./backoff.js";
import type { BlobTransfer } from "./blob-transfer.js";
import { JobCanceledError, LeaseLostError, SluiceApiError, WorkerClosingError } from "./errors.js";
import type { HttpClient } from "./http.js";
import { jobPath } from "./paths.js";
import { type AttachOptions, OutputAttachments } from "./output-attachments.js";
import { OutputStream } from "./output-stream.js";
import type { Timers } from "./timers.js";
import type { CompleteAck, FailAck, FailRequest, HeartbeatResponse, JsonValue, LeasedJob } from "./wire.js";

/** What a handler gets besides the job. */
export interface JobContext {
  /** Aborted when the job's cancel is requested, its lease is lost, or close() runs out of time. */
  readonly signal: AbortSignal;
  /** Records progress (0–1, clamped); sent with the next heartbeat. */
  progress(fraction: number): void;
  /**
   * Streams one chunk of output (any JSON value: a token, a partial result) to whoever follows
   * the job (`job.stream()`); sent in order: at once when no request is in flight, else together
   * (up to 1,000 a request) as soon as it is answered. Throws once the lease is lost.
   */
  emit(chunk: JsonValue): void;
  /** Resolves once every chunk emitted so far is stored (the worker also flushes before it reports). */
  flush(): Promise<void>;
  /** The job's input files by name (`await ctx.attachments.image.bytes()`, `.stream()`); `{}` without. */
  readonly attachments: Readonly<Record<string, Attachment>>;
  /**
   * Attaches a file to the job's result (at most 16, names 1–64 of [A-Za-z0-9._-]): uploaded now,
   * streamed; the job completes with it (`job.outputAttachments.<name>`). The worker waits for
   * every upload before it reports; a failed one fails the attempt (retried as a throw would be).
   */
  attach(name: string, data: AttachmentSource, opts?: AttachOptions): Promise<Attachment>;
}

export type WorkerPhase = "lease" | "heartbeat" | "complete" | "fail" | "release";

export interface LeaseDeps {
  http: HttpClient;
  /** Reads the job's attachments and uploads the handler's. */
  transfer: BlobTransfer;
  timers: Timers;
  random: () => number;
  leaseSeconds: number;
  onError: (err: unknown, where: { phase: WorkerPhase; jobId?: string }) => void;
}

/** The outcome a worker reports for one job. */
export type JobOutcome = { kind: "complete"; output: JsonValue } | { kind: "fail"; failure: Omit<FailRequest, "leaseId"> };

/** What the server confirmed of a report: the job completed, its attempt failed, or nothing (refused, unreachable, lease lost). */
export type Confirmed = JobOutcome["kind"] | undefined;

/** A report is retried this long past the lease's end at most: later, the lease is surely gone. */
const reportGraceMs = 15_000;

export class JobLease<I = JsonValue> {
  /**
   * Made when ctx.signal is first read: most handlers never read it, and an AbortController with
   * its signal is the costliest part of a lease for a worker of quick jobs.
   */
  private controller: AbortController | undefined;
  /** Why the lease aborted, if it did; the first reason wins. */
  private reason: Error | undefined;
  private pendingProgress: { value: number } | undefined;
  private cancelTimer: (() => void) | undefined;
  private stopped = false;
  private heartbeatFailures = 0;
  /** Set once the server told us this lease is no longer ours; nothing more is reported. */
  private lost: LeaseLostError | undefined;
  private cut = false;
  private readonly heartbeatIntervalMs: number;
  private leaseEndsAtMs: number;
  /** Made on the first ctx.emit(): most jobs stream nothing. */
  private output: OutputStream | undefined;
  /** Made on the first ctx.attach(). */
  private outputFiles: OutputAttachments | undefined;
  /** The uploaded output attachments' blob ids, once settleAttachments() has them. */
  private outputBlobIds: Record<string, string> | undefined;
  readonly context: JobContext;

  constructor(
    private readonly deps: LeaseDeps,
    readonly job: LeasedJob<I>,
  ) {
    this.heartbeatIntervalMs = Math.max(50, (deps.leaseSeconds * 1000) / 3);
    this.leaseEndsAtMs = deps.timers.nowMs() + deps.leaseSeconds * 1000;
    withAttachments(job, deps.transfer);
    this.context = new LeaseContext(this);
  }

  /** ctx.progress(): recorded here, sent with the next heartbeat. */
  recordProgress(fraction: number): void {
    if (typeof fraction !== "number" || Number.isNaN(fraction)) throw new TypeError(`progress must be a number in 0–1, got ${String(fraction)}`);
    this.pendingProgress = { value: Math.min(1, Math.max(0, fraction)) };
  }

  /** ctx.emit(). */
  emit(chunk: JsonValue): void {
    if (this.lost) throw this.lost;
    this.output ??= new OutputStream({
      http: this.deps.http,
      timers: this.deps.timers,
      jobId: this.job.id,
      attempt: this.job.attempt,
      leaseId: this.job.leaseId,
      onCancelRequested: () => this.abort(new JobCanceledError(this.job.id)),
      onLost: (code) => this.markLost(code),
      leaseEndsAtMs: () => this.leaseEndsAtMs,
    });
    this.output.emit(chunk);
  }

  /** ctx.attach(). */
  attach(name: string, data: AttachmentSource, opts?: AttachOptions): Promise<Attachment> {
    if (this.lost) return Promise.reject(this.lost);
    this.outputFiles ??= new OutputAttachments(this.deps.transfer);
    return this.outputFiles.attach(name, data, opts);
  }

  /** Whether the outcome carries output attachments (it then goes through the complete route). */
  get hasOutputAttachments(): boolean {
    return this.outputFiles !== undefined;
  }

  /** Before the outcome is reported: every ctx.attach() upload done; the failure of one, if one failed. */
  async settleAttachments(): Promise<{ error: unknown } | undefined> {
    if (!this.outputFiles) return undefined;
    const settled = await this.outputFiles.settle();
    if (!settled.ok) return { error: settled.error };
    this.outputBlobIds = settled.blobIds;
    return undefined;
  }

  /** ctx.flush(). */
  async flushOutput(): Promise<void> {
    await this.output?.flush();
  }

  /** Before the outcome is reported: whatever the handler emitted is stored first (a failure to is not the handler's). */
  async settleOutput(): Promise<void> {
    await this.output?.flush().catch(() => undefined);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Why ctx.signal aborted (or will, once read): cancel requested, lease lost, close() out of time. */
  get abortReason(): Error | undefined {
    return this.reason;
  }

  get cancelRequested(): boolean {
    return this.reason instanceof JobCanceledError;
  }

  get leaseLost(): boolean {
    return this.lost !== undefined;
  }

  /** True once close() ran out of time on this job's handler: whatever it returns later is ignored. */
  get wasCutOff(): boolean {
    return this.cut;
  }

  /**
   * close({ timeoutMs }) ran out: abort the handler's signal and stop extending the lease. The
   * worker hands the job back at once; the handler, if it ignores the signal, runs on unheard.
   */
  cutOff(): void {
    this.cut = true;
    this.abort(new WorkerClosingError());
    this.stopHeartbeats();
  }

  /** Aborts ctx.signal with `reason` unless it is aborted already (the first reason wins). */
  abort(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  startHeartbeats(): void {
    this.scheduleHeartbeat(this.heartbeatIntervalMs);
  }

  stopHeartbeats(): void {
    this.stopped = true;
    this.cancelTimer?.();
  }

  private scheduleHeartbeat(delayMs: number): void {
    if (this.stopped) return;
    this.cancelTimer = this.deps.timers.schedule(delayMs, () => void this.heartbeat());
  }

  private async heartbeat(): Promise<void> {
    if (this.stopped) return;
    const progress = this.pendingProgress;
    this.pendingProgress = undefined;
    try {
      const res = await this.deps.http.request<HeartbeatResponse>("POST", `${jobPath(this.job.id)}/heartbeat`, {
        body: { leaseId: this.job.leaseId, leaseSeconds: this.deps.leaseSeconds, ...(progress ? { progress: progress.value } : {}) },
        // Never wait on a heartbeat longer than the interval: the next one goes out instead.
        timeoutMs: this.heartbeatIntervalMs,
      });
      this.heartbeatFailures = 0;
      this.leaseEndsAtMs = this.deps.timers.nowMs() + this.deps.leaseSeconds * 1000;
      if (res.body?.cancelRequested) this.abort(new JobCanceledError(this.job.id));
      this.scheduleHeartbeat(this.heartbeatIntervalMs);
    } catch (err) {
      if (this.stopped) return;
      if (err instanceof SluiceApiError && err.status < 500 && err.status !== 429 && err.status !== 408) {
        // 409 LeaseExpired / LeaseMismatch / JobAlreadyFinished, 404 JobNotFound: the lease is
        // not ours any more; stop, tell the handler, and never report an outcome for it.
        if (err.status !== 409 && err.status !== 404) this.deps.onError(err, { phase: "heartbeat", jobId: this.job.id });
        this.markLost(err.code);
        return;
      }
      // Transient (server restarting): keep what progress we had and try again soon, sooner than
      // the normal cadence so the lease is extended before it runs out.
      if (progress && !this.pendingProgress) this.pendingProgress = progress;
      this.heartbeatFailures++;
      if (this.heartbeatFailures === 1) this.deps.onError(err, { phase: "heartbeat", jobId: this.job.id });
      // Unheard past the lease's end (a partition): the server has ended the lease — our estimate
      // of its end is never earlier than the server's — and the job may run elsewhere. The
      // handler is told now rather than never.
      if (this.deps.timers.nowMs() >= this.leaseEndsAtMs) {
        this.markLost("LeaseExpired");
        return;
      }
      const delayMs = Math.min(this.heartbeatIntervalMs, backoffDelayMs(this.heartbeatFailures, defaultBackoff, this.deps.random));
      this.scheduleHeartbeat(delayMs);
    }
  }

  private markLost(code: string): void {
    this.lost ??= new LeaseLostError(this.job.id, code);
    this.stopHeartbeats();
    this.abort(this.lost);
  }

  /**
   * Reports the outcome; resolves once the server has it (or it can no longer matter) with what
   * the server confirmed. An output the server refuses as too large fails the job instead: left
   * unreported, the job would wait out its lease and run again to the same output.
   */
  async report(outcome: JobOutcome): Promise<Confirmed> {
    this.stopHeartbeats();
    if (this.lost) return undefined;
    if (outcome.kind === "fail") return (await this.send("fail", "fail", { leaseId: this.job.leaseId, ...outcome.failure })) ? "fail" : undefined;
    const outputAttachments = this.outputBlobIds;
    const refused = await this.post("complete", { leaseId: this.job.leaseId, output: outcome.output, ...(outputAttachments ? { outputAttachments } : {}) });
    if (!refused) return "complete";
    if (!(refused.error instanceof SluiceApiError && refused.error.status === 413)) {
      this.deps.onError(refused.error, { phase: "complete", jobId: this.job.id });
      return undefined;
    }
    const error = { message: `the server refused the handler's output: ${refused.error.message}`, type: refused.error.code };
    return (await this.send("fail", "fail", { leaseId: this.job.leaseId, error, retryable: false })) ? "fail" : undefined;
  }

  /**
   * The outcome as an ack to ride on a lease request (the worker's "complete this, give me the
   * next"); undefined when the lease is lost and nothing may be reported. Stops the heartbeats.
   */
  ackFor(outcome: JobOutcome): { kind: "complete"; ack: CompleteAck } | { kind: "fail"; ack: FailAck } | undefined {
    this.stopHeartbeats();
    if (this.lost) return undefined;
    // Literals, not `{ ...base, output }`: on Node 20 a spread that adds a key makes an object
    // that outlives young-generation GCs, and the output with it (docs/benchmarks-history.md).
    const { id, leaseId } = this.job;
    return outcome.kind === "complete" ? { kind: "complete", ack: { id, leaseId, output: outcome.output } } : { kind: "fail", ack: { id, leaseId, ...outcome.failure } };
  }

  /** The server refused this lease's ack (LeaseExpired, …): told as a refused complete / fail route would be. */
  ackRefused(kind: "complete" | "fail", error: { code: string; message: string }): void {
    this.deps.onError(new SluiceApiError(error.code, error.code === "JobNotFound" ? 404 : 409, error.message), { phase: kind, jobId: this.job.id });
  }

  /**
   * Hands a job that never started back to the queue at once (the release route): queued again,
   * its attempt given back, so a worker's restarts never use up a job's attempts. Resolves true
   * once the server has it.
   */
  async release(): Promise<boolean> {
    this.stopHeartbeats();
    if (this.lost) return false;
    const refused = await this.post("release", { leaseId: this.job.leaseId });
    if (!refused) return true;
    const err = refused.error;
    // A server from before the release route answers its generic 404 (not JobNotFound): hand the
    // job back as a retryable failure with no delay instead, which there counts an attempt.
    if (err instanceof SluiceApiError && err.status === 404 && err.code !== "JobNotFound") {
      return this.send("fail", "release", {
        leaseId: this.job.leaseId,
        error: { message: "worker shut down before starting the job", type: "WorkerShutdown" },
        retryable: true,
        retryAfterSeconds: 0,
      });
    }
    this.deps.onError(err, { phase: "release", jobId: this.job.id });
    return false;
  }

  /** post(), with a refusal told to onError; true once the server has it. */
  private async send(route: "complete" | "fail", phase: WorkerPhase, body: object): Promise<boolean> {
    const refused = await this.post(route, body);
    // Not fatal to the worker: the server re-offers the job when the lease ends.
    if (refused) this.deps.onError(refused.error, { phase, jobId: this.job.id });
    return !refused;
  }

  /** POSTs to one of the job's worker routes; resolves with the error it ended on, or undefined once the server has it. */
  private async post(route: "complete" | "fail" | "release", body: object): Promise<{ error: unknown } | undefined> {
    // Retry transient failures until the lease has surely ended: a server that restarts within
    // that window still gets the result and the inference is not wasted.
    const giveUp = new AbortController();
    const cancel = this.deps.timers.schedule(Math.max(0, this.leaseEndsAtMs - this.deps.timers.nowMs()) + reportGraceMs, () =>
      giveUp.abort(new Error(`gave up reporting job ${this.job.id}: the server stayed unreachable past the lease`)),
    );
    try {
      await this.deps.http.request("POST", `${jobPath(this.job.id)}/${route}`, { body, signal: giveUp.signal, maxAttempts: Infinity });
      return undefined;
    } catch (error) {
      return { error };
    } finally {
      cancel();
    }
  }
}

/**
 * A job's ctx. A class, not an object literal with `get signal()`: a literal's getter is a new
 * closure per lease, so each ctx got a hidden class of its own — and V8 keeps hidden classes in the
 * old generation, where one held its lease (the job's input included) past every young GC
 * (docs/benchmarks-history.md, "Garbage that outlived its group"). Here the getter is the prototype's.
 */
class LeaseContext implements JobContext {
  /** Own properties, so `const { progress, emit } = ctx` still works. */
  readonly progress: (fraction: number) => void;
  readonly emit: (chunk: JsonValue) => void;
  readonly flush: () => Promise<void>;
  readonly attach: (name: string, data: AttachmentSource, opts?: AttachOptions) => Promise<Attachment>;

  constructor(private readonly lease: JobLease<unknown>) {
    this.progress = (fraction) => lease.recordProgress(fraction);
    this.emit = (chunk) => lease.emit(chunk);
    this.flush = () => lease.flushOutput();
    this.attach = (name, data, opts) => lease.attach(name, data, opts);
  }

  get attachments(): Readonly<Record<string, Attachment>> {
    return this.lease.job.attachments;
  }

  get signal(): AbortSignal {
    return this.lease.signal;
  }
}
