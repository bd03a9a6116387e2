/**
 * One leased job inside a worker: keeps its lease alive with heartbeats at a third of the lease
 * (so a slow inference never times out while the worker lives), carries ctx.progress() to the
 * server, turns "cancel requested" or a lost lease into an aborted ctx.signal, and reports the
 * outcome (complete / fail / hand back) with retries that outlast a server restart.
 */
import { backoffDelayMs, defaultBackoff } from "./backoff.js";
import { JobCanceledError, LeaseLostError, SluiceApiError } from "./errors.js";
import type { HttpClient } from "./http.js";
import { jobPath } from "./jobs.js";
import type { Timers } from "./timers.js";
import type { CompleteAck, FailAck, FailRequest, HeartbeatResponse, JsonValue, LeasedJob } from "./wire.js";

/** What a handler gets besides the job. */
export interface JobContext {
  /** Aborted when the job's cancel is requested, its lease is lost, or close() runs out of time. */
  readonly signal: AbortSignal;
  /** Records progress (0–1, clamped); sent with the next heartbeat. */
  progress(fraction: number): void;
}

export type WorkerPhase = "lease" | "heartbeat" | "complete" | "fail" | "release";

export interface LeaseDeps {
  http: HttpClient;
  timers: Timers;
  random: () => number;
  leaseSeconds: number;
  onError: (err: unknown, where: { phase: WorkerPhase; jobId?: string }) => void;
}

/** The outcome a worker reports for one job. */
export type JobOutcome = { kind: "complete"; output: JsonValue } | { kind: "fail"; failure: Omit<FailRequest, "leaseId"> };

/** A report is retried this long past the lease's end at most: later, the lease is surely gone. */
const reportGraceMs = 15_000;

export class JobLease<I = JsonValue> {
  private readonly controller = new AbortController();
  private pendingProgress: { value: number } | undefined;
  private cancelTimer: (() => void) | undefined;
  private stopped = false;
  private heartbeatFailures = 0;
  /** Set once the server told us this lease is no longer ours; nothing more is reported. */
  private lost: LeaseLostError | undefined;
  private readonly heartbeatIntervalMs: number;
  private leaseEndsAtMs: number;
  readonly context: JobContext;

  constructor(
    private readonly deps: LeaseDeps,
    readonly job: LeasedJob<I>,
  ) {
    this.heartbeatIntervalMs = Math.max(50, (deps.leaseSeconds * 1000) / 3);
    this.leaseEndsAtMs = deps.timers.nowMs() + deps.leaseSeconds * 1000;
    const signal = this.controller.signal;
    this.context = {
      signal,
      progress: (fraction) => {
        if (typeof fraction !== "number" || Number.isNaN(fraction)) throw new TypeError(`progress must be a number in 0–1, got ${String(fraction)}`);
        this.pendingProgress = { value: Math.min(1, Math.max(0, fraction)) };
      },
    };
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get cancelRequested(): boolean {
    return this.controller.signal.reason instanceof JobCanceledError;
  }

  get leaseLost(): boolean {
    return this.lost !== undefined;
  }

  /** Aborts ctx.signal with `reason` unless it is aborted already (the first reason wins). */
  abort(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
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
      const delayMs = Math.min(this.heartbeatIntervalMs, backoffDelayMs(this.heartbeatFailures, defaultBackoff, this.deps.random));
      this.scheduleHeartbeat(delayMs);
    }
  }

  private markLost(code: string): void {
    this.lost ??= new LeaseLostError(this.job.id, code);
    this.stopHeartbeats();
    this.abort(this.lost);
  }

  /** Reports the outcome; resolves once the server has it (or it can no longer matter). */
  async report(outcome: JobOutcome): Promise<void> {
    this.stopHeartbeats();
    if (this.lost) return;
    if (outcome.kind === "complete") {
      await this.send("complete", "complete", { leaseId: this.job.leaseId, output: outcome.output });
    } else {
      await this.send("fail", "fail", { leaseId: this.job.leaseId, ...outcome.failure });
    }
  }

  /**
   * The outcome as an ack to ride on a lease request (the worker's "complete this, give me the
   * next"); undefined when the lease is lost and nothing may be reported. Stops the heartbeats.
   */
  ackFor(outcome: JobOutcome): { kind: "complete"; ack: CompleteAck } | { kind: "fail"; ack: FailAck } | undefined {
    this.stopHeartbeats();
    if (this.lost) return undefined;
    const base = { id: this.job.id, leaseId: this.job.leaseId };
    return outcome.kind === "complete" ? { kind: "complete", ack: { ...base, output: outcome.output } } : { kind: "fail", ack: { ...base, ...outcome.failure } };
  }

  /** The server refused this lease's ack (LeaseExpired, …): told as a refused complete / fail route would be. */
  ackRefused(kind: "complete" | "fail", error: { code: string; message: string }): void {
    this.deps.onError(new SluiceApiError(error.code, error.code === "JobNotFound" ? 404 : 409, error.message), { phase: kind, jobId: this.job.id });
  }

  /**
   * Hands a job that never started back to the queue at once, through the fail route as a
   * retryable failure with no delay (the API has no separate release; this counts an attempt).
   */
  async release(): Promise<void> {
    this.stopHeartbeats();
    if (this.lost) return;
    await this.send("fail", "release", {
      leaseId: this.job.leaseId,
      error: { message: "worker shut down before starting the job", type: "WorkerShutdown" },
      retryable: true,
      retryAfterSeconds: 0,
    });
  }

  private async send(route: "complete" | "fail", phase: WorkerPhase, body: object): Promise<void> {
    // Retry transient failures until the lease has surely ended: a server that restarts within
    // that window still gets the result and the inference is not wasted.
    const giveUp = new AbortController();
    const cancel = this.deps.timers.schedule(Math.max(0, this.leaseEndsAtMs - this.deps.timers.nowMs()) + reportGraceMs, () =>
      giveUp.abort(new Error(`gave up reporting job ${this.job.id}: the server stayed unreachable past the lease`)),
    );
    try {
      await this.deps.http.request("POST", `${jobPath(this.job.id)}/${route}`, { body, signal: giveUp.signal, maxAttempts: Infinity });
    } catch (err) {
      // Not fatal to the worker: the server re-offers the job when the lease ends.
      this.deps.onError(err, { phase, jobId: this.job.id });
    } finally {
      cancel();
    }
  }
}
