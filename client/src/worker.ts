/**
 * The worker behind `queue.work()`: long-poll leases while there is room (lease-loop.ts), run up
 * to `concurrency` handlers (or batches) at once (slots.ts), report each outcome (ack-batcher.ts,
 * or the job's own routes), and on close() stop leasing, let in-flight work finish, and hand back
 * anything leased but not started (drain.ts). This file wires those parts and runs the handlers.
 */
import { AckBatcher } from "./ack-batcher.js";
import { drain } from "./drain.js";
import { type BatchHandler, type ErasedHandler, type JobHandler, batchContext, settle } from "./handlers.js";
import type { HttpClient } from "./http.js";
import { checkTimeoutMs } from "./jobs.js";
import { type Confirmed, JobLease, type JobOutcome, type LeaseDeps } from "./job-lease.js";
import { leaseLoop } from "./lease-loop.js";
import { LeaseRequests } from "./lease-requests.js";
import { outcomeOf, outcomesOfBatch } from "./outcomes.js";
import { ShortLivedSet } from "./short-lived-set.js";
import { type Slot, Slots } from "./slots.js";
import type { Timers } from "./timers.js";
import type { JsonValue, LeasedJob } from "./wire.js";
import { type CloseOptions, type WorkerOptions, resolveWorkerOptions } from "./worker-options.js";
import { type OpenTelemetryApi, inJobSpan } from "./tracing.js";
import { WorkUnits } from "./work-units.js";

// The worker's public types, where index.ts (and queue.work()'s callers) find them.
export type { JobContext, WorkerPhase } from "./job-lease.js";
export type { BatchContext, BatchHandler, BatchOptions, BatchResult, JobHandler } from "./handlers.js";
export type { CloseOptions, WorkerOptions } from "./worker-options.js";

/** What the worker did, counted once the server confirmed it. */
export interface WorkerStats {
  leased: number;
  completed: number;
  /** Attempts reported failed (retried or not), canceled jobs included. */
  failed: number;
  /** Jobs handed back by close(): never started (attempt given back) or cut off by its timeout. */
  released: number;
  /** Jobs whose handler is running now. */
  active: number;
}

export class Worker {
  private closing = false;
  private closed: Promise<void> | undefined;
  private readonly stopLeasing = new AbortController();
  private readonly units: WorkUnits;
  /** Leases whose handler is running now. */
  private readonly running = new ShortLivedSet<JobLease>();
  private readonly slots: Slots;
  private readonly acks: AckBatcher;
  /** The lease error that stopped the worker on its own, if one did. */
  private fatal: { error: unknown } | undefined;
  private settleDone: () => void = () => {};
  private readonly loopDone: Promise<void>;
  private readonly deps: LeaseDeps;
  private readonly otel: OpenTelemetryApi | undefined;
  /** Outcomes the server confirmed (a report it refused or never got counts nowhere). */
  readonly stats: WorkerStats = { leased: 0, completed: 0, failed: 0, released: 0, active: 0 };
  /**
   * Settles once the worker has stopped and holds nothing. Resolves after close() (or `signal`)
   * drained it; rejects with the server's error when the worker stopped on its own because the
   * server refuses its lease requests in a way no retry can fix (a 4xx other than 408 / 429: a
   * queue name it rejects, a wrong token) — the worker drains as for close() first.
   */
  readonly done: Promise<void>;

  constructor(
    http: HttpClient,
    readonly queue: string,
    private readonly handler: ErasedHandler,
    opts: WorkerOptions,
    defaultTimers: Timers,
  ) {
    const { concurrency, waitSeconds, deps, labels, workerId } = resolveWorkerOptions(opts, http, defaultTimers);
    this.otel = opts.opentelemetry;
    this.deps = deps;
    this.slots = new Slots(concurrency);
    this.units = new WorkUnits(deps.onError);
    const requests = new LeaseRequests(http, queue, { waitSeconds, leaseSeconds: deps.leaseSeconds, batch: opts.batch, labels, workerId });
    const start = (jobs: LeasedJob[]): void => this.start(jobs);
    const isClosing = (): boolean => this.closing;
    this.acks = new AckBatcher({ slots: this.slots, requests, isClosing, start, track: (work, phase) => this.units.track(work, phase) });
    this.done = new Promise<void>((resolve, reject) => {
      this.settleDone = () => (this.fatal ? reject(this.fatal.error) : resolve());
    });
    // Nobody has to await `done`: unobserved, its rejection would otherwise crash the process.
    this.done.catch(() => {});
    if (opts.signal?.aborted) this.closing = true;
    opts.signal?.addEventListener("abort", () => void this.close(), { once: true });
    const onFatal = (err: unknown): void => {
      this.fatal ??= { error: err };
      this.deps.onError(err, { phase: "lease" });
      void this.close();
    };
    // One long poll at a time, asking for every free slot: the jobs a poll doesn't get come with
    // the replacements each ack request asks for. Several polls in flight split each batch of
    // submits into one-job leases — more requests and server writes per job, and fewer jobs per
    // second (measured: docs/benchmarks-history.md, "One lease loop").
    const loop = { deps, slots: this.slots, requests, stopLeasing: this.stopLeasing.signal, isClosing, start, onFatal };
    this.loopDone = leaseLoop(loop);
  }

  /**
   * Stops leasing, lets running handlers finish and reports their outcomes, hands back jobs
   * leased but not started, and resolves when the worker holds nothing. With `timeoutMs`, hands
   * back the jobs whose handlers are still running when it passes and stops waiting for them.
   * Idempotent: later calls get the first call's promise.
   */
  close(opts: CloseOptions = {}): Promise<void> {
    // A bad timeout rejects and leaves the worker running: NaN would cut every handler off at once.
    try {
      checkTimeoutMs(opts.timeoutMs);
    } catch (err) {
      return Promise.reject(err);
    }
    this.closed ??= drain(
      {
        timers: this.deps.timers,
        stopLeasing: () => {
          this.closing = true;
          this.stopLeasing.abort();
          this.slots.wake();
        },
        loopsDone: this.loopDone,
        flushAcks: () => this.acks.flush(),
        units: this.units,
        cutOffRunning: () => this.cutOffRunning(),
        drained: () => this.settleDone(),
      },
      opts,
    );
    return this.closed;
  }

  /**
   * close()'s timeout passed: every job whose handler still runs goes back to the queue now and
   * is forgotten — its handler, if it ignores ctx.signal, runs on, unheard. Through the fail
   * route, not release: the handler ran and may have had effects, so the attempt counts.
   */
  private cutOffRunning(): void {
    for (const lease of [...this.running]) {
      lease.cutOff();
      this.units.track(this.handBack(lease), "fail");
    }
    this.end([...this.running]);
  }

  private async handBack(lease: JobLease): Promise<void> {
    // outcomeOf turns the WorkerClosingError into "retry now" (or, if a cancel came first, "canceled").
    if (await lease.report(outcomeOf({ ok: false, error: lease.abortReason }, lease))) this.stats.released++;
  }

  /** Runs freshly leased jobs (or hands them back when close() began meanwhile). */
  private start(jobs: LeasedJob[]): void {
    this.stats.leased += jobs.length;
    const leases = jobs.map((job) => new JobLease(this.deps, job));
    if (this.closing) {
      // Leased while close() began (a request was in flight): these never start, so they go
      // straight back, their attempts given back; close() waits for the hand-backs.
      for (const lease of leases) this.units.track(this.release(lease), "release");
      return;
    }
    const handler = this.handler;
    if ("batch" in handler) {
      if (leases.length > 0) this.track(() => this.runBatch(handler.batch, leases), leases);
    } else {
      for (const lease of leases) this.track((slot) => this.runOne(handler.one, lease, slot), [lease]);
    }
  }

  /** A handler unit: holds a slot until it ends (or hands the slot to the lease request reporting it). */
  private track(run: (slot: Slot) => Promise<void>, leases: readonly JobLease[]): void {
    const slot = this.slots.hold();
    this.units.track(
      run(slot).finally(() => slot.release()),
      "complete",
      leases,
    );
  }

  private async runOne(handler: JobHandler<JsonValue, unknown>, lease: JobLease, slot: Slot): Promise<void> {
    this.begin([lease]);
    const result = await settle(() => (this.otel ? inJobSpan(this.otel, lease.job, async () => handler(lease.job, lease.context)) : handler(lease.job, lease.context)));
    if (lease.wasCutOff) return; // handed back when close() timed out: this late outcome goes nowhere
    await lease.settleOutput(); // a follower sees every chunk before the job's end
    // Awaited only when there is something to wait for: a quick job's path stays free of extra turns.
    const attachFailure = lease.hasOutputAttachments ? await lease.settleAttachments() : undefined;
    this.end([lease]);
    const outcome = outcomeOf(attachFailure ? { ok: false, error: attachFailure.error } : result, lease);
    // Output attachments go through the complete route, which takes them on every server that has blobs.
    if (this.closing || !this.acks.supported || lease.hasOutputAttachments) return this.finish(lease, outcome);
    // The outcome rides on a lease request that also asks for the next job (one request, one
    // server write, where complete + lease would be two of each).
    const ack = lease.ackFor(outcome);
    if (ack) this.count(await new Promise<Confirmed>((done) => this.acks.queue({ lease, outcome, ack, slot, done })));
  }

  /** Batch outcomes go through the complete / fail routes: the next batch is gathered by a long poll. */
  private async runBatch(handler: BatchHandler<JsonValue, unknown>, leases: JobLease[]): Promise<void> {
    this.begin(leases);
    const ctx = batchContext(leases);
    const result = await settle(() => handler(leases.map((l) => l.job), ctx));
    const attachFailures = leases.some((l) => l.hasOutputAttachments) ? await Promise.all(leases.map((l) => l.settleAttachments())) : [];
    // Jobs handed back when close() timed out are not reported again.
    this.end(leases.filter((l) => !l.wasCutOff));
    const outcomes = outcomesOfBatch(result, leases).map((outcome, i) => {
      const failure = attachFailures[i];
      return failure && outcome.kind === "complete" ? outcomeOf({ ok: false, error: failure.error }, leases[i]!) : outcome;
    });
    await Promise.all(leases.map((lease, i) => (lease.wasCutOff ? undefined : this.finish(lease, outcomes[i]!))));
  }

  private begin(leases: JobLease[]): void {
    for (const lease of leases) {
      this.running.add(lease);
      lease.startHeartbeats();
    }
    this.stats.active = this.running.size;
  }

  private end(leases: JobLease[]): void {
    for (const lease of leases) this.running.delete(lease);
    this.stats.active = this.running.size;
  }

  private count(confirmed: Confirmed): void {
    if (confirmed === "complete") this.stats.completed++;
    else if (confirmed === "fail") this.stats.failed++;
  }

  private async finish(lease: JobLease, outcome: JobOutcome): Promise<void> {
    this.count(await lease.report(outcome));
  }

  private async release(lease: JobLease): Promise<void> {
    if (await lease.release()) this.stats.released++;
  }
}
