/**
 * The worker loop behind `queue.work()`: long-poll leases while there is room, run up to
 * `concurrency` handlers (or batches) at once, report each outcome, and on close() stop leasing,
 * let in-flight work finish, and hand back anything leased but not started.
 */
import { backoffDelayMs, defaultBackoff } from "./backoff.js";
import type { BatchItemError } from "./errors.js";
import type { HttpClient } from "./http.js";
import { type Confirmed, type JobContext, JobLease, type JobOutcome, type LeaseDeps, type WorkerPhase } from "./job-lease.js";
import { isAcksUnknownError, isFatalLeaseError } from "./lease-errors.js";
import { type HandlerResult, outcomeOf, outcomesOfBatch } from "./outcomes.js";
import { longPollGraceMs } from "./jobs.js";
import { type Timers, nextTurn, sleep } from "./timers.js";
import type { CompleteAck, FailAck, JsonValue, LeaseRequest, LeaseResponse, LeasedJob } from "./wire.js";

export type { JobContext, WorkerPhase } from "./job-lease.js";

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

export interface WorkerOptions {
  /** Handlers (or batches) running at once. Default 1. */
  concurrency?: number;
  /** Lease length; heartbeats extend it every third of it. Default 30. */
  leaseSeconds?: number;
  /** Long-poll length of one lease request (0–20). Default 20. */
  waitSeconds?: number;
  batch?: BatchOptions;
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

/** Lease requests a worker keeps in flight at most (one per loop). */
const maxLeaseLoops = 4;

/** Acks one lease request carries at most (the server's limit). */
const maxAcksPerRequest = 100;

/** A handler slot: held while its job runs, then released once — or handed over to the lease request that reports it. */
class Slot {
  private released = false;
  constructor(private readonly onRelease: (wake: boolean) => void) {}
  release(wake = true): void {
    if (this.released) return;
    this.released = true;
    this.onRelease(wake);
  }
}

/** A finished job's outcome waiting to ride on the next ack-carrying lease request. */
interface PendingAck {
  lease: JobLease;
  outcome: JobOutcome;
  ack: { kind: "complete"; ack: CompleteAck } | { kind: "fail"; ack: FailAck };
  slot: Slot;
  /** Resolves the job's unit with what the server confirmed (a refusal went to onError). */
  done: (confirmed: Confirmed) => void;
}

/**
 * The handler as the worker holds it: its input and output types erased (they matter to the
 * caller of queue.work(), which checks them), so every Worker is the same type.
 */
export type ErasedHandler = { one: JobHandler<JsonValue, unknown> } | { batch: BatchHandler<JsonValue, unknown> };

export class Worker {
  private closing = false;
  private closed: Promise<void> | undefined;
  private readonly stopLeasing = new AbortController();
  /**
   * Everything close() waits for — handlers with their reports, ack requests, hand-backs — each
   * with the leases whose handler it runs (none for the rest): once close()'s timeout has cut
   * all of a unit's handlers off, it is no longer waited for.
   */
  private readonly units = new Map<Promise<void>, readonly JobLease[]>();
  /** Leases whose handler is running now. */
  private readonly running = new Set<JobLease>();
  /** Lease loops waiting for a free slot. */
  private readonly slotWaiters = new Set<() => void>();
  /** Slots asked for by lease requests in flight (not yet running). */
  private reserved = 0;
  /** Slots held by units: a handler running, or (batch handlers, close) its outcome being reported. */
  private held = 0;
  /** Outcomes of finished jobs for the next ack-carrying lease request, sent once this turn ends. */
  private pendingAcks: PendingAck[] = [];
  private acksScheduled = false;
  /** Set when the server refused an ack-carrying lease as malformed (a server from before acks). */
  private acksUnsupported = false;
  /** The lease error that stopped the worker on its own, if one did. */
  private fatal: { error: unknown } | undefined;
  private settleDone: () => void = () => {};
  private readonly loopDone: Promise<void>;
  private readonly deps: LeaseDeps;
  private readonly concurrency: number;
  private readonly waitSeconds: number;
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
    private readonly opts: WorkerOptions,
    defaultTimers: Timers,
  ) {
    this.concurrency = checkInt("concurrency", opts.concurrency ?? 1, 1, 10_000);
    this.waitSeconds = checkInt("waitSeconds", opts.waitSeconds ?? 20, 0, 20);
    const leaseSeconds = checkInt("leaseSeconds", opts.leaseSeconds ?? 30, 1, 43_200);
    if (opts.batch) {
      checkInt("batch.size", opts.batch.size, 1, 100);
      checkInt("batch.windowMs", opts.batch.windowMs, 0, 10_000);
    }
    this.deps = {
      http,
      timers: opts.timers ?? defaultTimers,
      random: opts.random ?? Math.random,
      leaseSeconds,
      onError: opts.onError ?? defaultOnError,
    };
    this.done = new Promise<void>((resolve, reject) => {
      this.settleDone = () => (this.fatal ? reject(this.fatal.error) : resolve());
    });
    // Nobody has to await `done`: unobserved, its rejection would otherwise crash the process.
    this.done.catch(() => {});
    if (opts.signal?.aborted) this.closing = true;
    opts.signal?.addEventListener("abort", () => void this.close(), { once: true });
    // Several lease requests in flight: with one, a long poll woken by one submit returns one
    // job, and jobs are then leased one round trip at a time. Batch handlers keep one loop, so a
    // batch is gathered by one request.
    const loops = opts.batch ? 1 : Math.min(this.concurrency, maxLeaseLoops);
    this.loopDone = Promise.all(Array.from({ length: loops }, () => this.leaseLoop(loops))).then(() => undefined);
  }

  /**
   * Stops leasing, lets running handlers finish and reports their outcomes, hands back jobs
   * leased but not started, and resolves when the worker holds nothing. With `timeoutMs`, hands
   * back the jobs whose handlers are still running when it passes and stops waiting for them.
   * Idempotent: later calls get the first call's promise.
   */
  close(opts: CloseOptions = {}): Promise<void> {
    this.closed ??= this.drain(opts);
    return this.closed;
  }

  private async drain(opts: CloseOptions): Promise<void> {
    this.closing = true;
    this.stopLeasing.abort();
    this.wakeSlotWaiters();
    let timedOut = false;
    let wakeOnTimeout = (): void => {};
    const timeout = new Promise<void>((resolve) => (wakeOnTimeout = resolve));
    const cancel =
      opts.timeoutMs === undefined
        ? () => {}
        : this.deps.timers.schedule(opts.timeoutMs, () => {
            timedOut = true;
            this.cutOffRunning();
            wakeOnTimeout();
          });
    try {
      await this.loopDone;
      this.sendPendingAcks(); // what finished as close() began; ask 0 jobs now
      for (;;) {
        const waited = [...this.units].flatMap(([unit, leases]) => (leases.length > 0 && leases.every((l) => l.wasCutOff) ? [] : [unit]));
        if (waited.length === 0) break;
        // Units may add units (an ack request's answer leases a job, which goes back): look again.
        await (timedOut ? Promise.all(waited) : Promise.race([Promise.all(waited), timeout]));
      }
    } finally {
      cancel();
      this.settleDone();
    }
  }

  /**
   * close()'s timeout passed: every job whose handler still runs goes back to the queue now and
   * is forgotten — its handler, if it ignores ctx.signal, runs on, unheard. Through the fail
   * route, not release: the handler ran and may have had effects, so the attempt counts.
   */
  private cutOffRunning(): void {
    for (const lease of this.running) {
      lease.cutOff();
      this.trackWork(this.handBack(lease), "fail");
    }
    this.end([...this.running]);
  }

  private async handBack(lease: JobLease): Promise<void> {
    // outcomeOf turns the WorkerClosingError into "retry now" (or, if a cancel came first, "canceled").
    if (await lease.report(outcomeOf({ ok: false, error: lease.signal.reason }, lease))) this.stats.released++;
  }

  private wakeSlotWaiters(): void {
    for (const wake of this.slotWaiters) wake();
    this.slotWaiters.clear();
  }

  private async leaseLoop(loops: number): Promise<void> {
    let failures = 0;
    while (!this.closing) {
      const free = this.concurrency - this.held - this.reserved;
      if (free <= 0) {
        await new Promise<void>((resolve) => this.slotWaiters.add(resolve));
        continue;
      }
      // A share of the free slots, so the other loops' requests can ask for some too.
      const ask = Math.ceil(free / loops);
      let jobs: LeasedJob[];
      this.reserved += ask;
      try {
        jobs = await this.lease(ask);
        if (failures > 0) failures = 0;
      } catch (err) {
        if (this.closing) break;
        if (isFatalLeaseError(err)) {
          // Retrying would only repeat the refusal while the worker looked healthy: stop, and say why.
          this.fatal ??= { error: err };
          this.deps.onError(err, { phase: "lease" });
          void this.close();
          break;
        }
        failures++;
        // Report the first failure of an outage and then every 20th retry, not each one.
        if (failures % 20 === 1) this.deps.onError(err, { phase: "lease" });
        await sleep(this.deps.timers, backoffDelayMs(failures - 1, defaultBackoff, this.deps.random), this.stopLeasing.signal);
        continue;
      } finally {
        this.reserved -= ask;
      }
      this.start(jobs);
    }
  }

  /** Runs freshly leased jobs (or hands them back when close() began meanwhile). */
  private start(jobs: LeasedJob[]): void {
    this.stats.leased += jobs.length;
    const leases = jobs.map((job) => new JobLease(this.deps, job));
    if (this.closing) {
      // Leased while close() began (a request was in flight): these never start, so they go
      // straight back, their attempts given back; close() waits for the hand-backs.
      for (const lease of leases) this.trackWork(this.release(lease), "release");
      return;
    }
    const handler = this.handler;
    if ("batch" in handler) {
      if (leases.length > 0) this.track(() => this.runBatch(handler.batch, leases), leases);
    } else {
      for (const lease of leases) this.track((slot) => this.runOne(handler.one, lease, slot), [lease]);
    }
  }

  private async lease(free: number): Promise<LeasedJob[]> {
    const batch = this.opts.batch;
    const body: LeaseRequest = {
      max: batch ? batch.size : Math.min(free, 100),
      waitSeconds: this.waitSeconds,
      leaseSeconds: this.deps.leaseSeconds,
      ...(batch ? { batchWindowMs: batch.windowMs } : {}),
    };
    const res = await this.deps.http.request<LeaseResponse>("POST", this.leasesPath, {
      body,
      signal: this.stopLeasing.signal,
      timeoutMs: this.waitSeconds * 1000 + (batch?.windowMs ?? 0) + longPollGraceMs,
    });
    return res.body.jobs;
  }

  /** A handler unit: holds a slot until it ends (or hands the slot to the lease request reporting it). */
  private track(run: (slot: Slot) => Promise<void>, leases: readonly JobLease[]): void {
    this.held++;
    const slot = new Slot((wake) => {
      this.held--;
      if (wake) this.wakeSlotWaiters();
    });
    this.trackWork(
      run(slot).finally(() => slot.release()),
      "complete",
      leases,
    );
  }

  /** Makes close() wait for `work` (unless close()'s timeout cut off all of `leases`' handlers). */
  private trackWork(work: Promise<void>, phase: WorkerPhase, leases: readonly JobLease[] = []): void {
    // Units report their own failures; a rejection here would be a bug in the worker itself.
    const unit = work.catch((err: unknown) => this.deps.onError(err, { phase }));
    this.units.set(unit, leases);
    void unit.finally(() => this.units.delete(unit));
  }

  private async runOne(handler: JobHandler<JsonValue, unknown>, lease: JobLease, slot: Slot): Promise<void> {
    this.begin([lease]);
    const result = await settle(() => handler(lease.job, lease.context));
    if (lease.wasCutOff) return; // handed back when close() timed out: this late outcome goes nowhere
    this.end([lease]);
    const outcome = outcomeOf(result, lease);
    if (this.closing || this.acksUnsupported) return this.finish(lease, outcome);
    // The outcome rides on a lease request that also asks for the next job (one request, one
    // server write, where complete + lease would be two of each).
    const ack = lease.ackFor(outcome);
    if (ack) this.count(await new Promise<Confirmed>((done) => this.queueAck({ lease, outcome, ack, slot, done })));
  }

  private queueAck(pending: PendingAck): void {
    this.pendingAcks.push(pending);
    if (this.acksScheduled) return;
    this.acksScheduled = true;
    // Outcomes of jobs that finish in this turn (a lease answer's worth of fast handlers) share a request.
    nextTurn(() => this.sendPendingAcks());
  }

  private sendPendingAcks(): void {
    this.acksScheduled = false;
    // Tracked: a request sent as close() begins may still lease jobs, which close() hands back.
    while (this.pendingAcks.length > 0) this.trackWork(this.sendAcks(this.pendingAcks.splice(0, maxAcksPerRequest)), "lease");
  }

  /**
   * One lease request carrying these outcomes and asking for as many jobs as they free slots
   * (none once closing). The slots pass to the request's reservation, so the lease loops don't
   * also ask for them. An answer that doesn't come back leaves the outcomes unconfirmed: each is
   * then reported through its own route, with that route's retries — one the server did apply
   * answers 409, which onError hears as for any lost race.
   */
  private async sendAcks(group: PendingAck[]): Promise<void> {
    for (const a of group) a.slot.release(false);
    this.reserved += group.length;
    const ordered = [...group.filter((a) => a.ack.kind === "complete"), ...group.filter((a) => a.ack.kind === "fail")];
    const body: LeaseRequest = {
      max: this.closing ? 0 : group.length,
      waitSeconds: 0,
      leaseSeconds: this.deps.leaseSeconds,
      complete: ordered.flatMap((a) => (a.ack.kind === "complete" ? [a.ack.ack] : [])),
      fail: ordered.flatMap((a) => (a.ack.kind === "fail" ? [a.ack.ack] : [])),
    };
    let res: LeaseResponse;
    try {
      res = (await this.deps.http.request<LeaseResponse>("POST", this.leasesPath, { body, timeoutMs: longPollGraceMs })).body;
    } catch (err) {
      if (isAcksUnknownError(err)) this.acksUnsupported = true;
      this.reserved -= group.length;
      this.wakeSlotWaiters();
      await Promise.all(ordered.map(async (a) => a.done(await a.lease.report(a.outcome))));
      return;
    }
    this.reserved -= group.length;
    ordered.forEach((a, i) => {
      const result = res.results?.[i];
      if (result && !result.ok) a.lease.ackRefused(a.ack.kind, result.error);
      a.done(result && !result.ok ? undefined : a.ack.kind);
    });
    if (res.jobs.length < group.length) this.wakeSlotWaiters();
    this.start(res.jobs);
  }

  private count(confirmed: Confirmed): void {
    if (confirmed === "complete") this.stats.completed++;
    else if (confirmed === "fail") this.stats.failed++;
  }

  private get leasesPath(): string {
    return `/v1/queues/${encodeURIComponent(this.queue)}/leases`;
  }

  /** Batch outcomes go through the complete / fail routes: the next batch is gathered by a long poll. */
  private async runBatch(handler: BatchHandler<JsonValue, unknown>, leases: JobLease[]): Promise<void> {
    this.begin(leases);
    const batchSignal = allAborted(leases.map((l) => l.signal));
    const ctx: BatchContext = {
      signal: batchSignal,
      items: leases.map((l) => l.context),
      progress: (value) => leases.forEach((l) => l.context.progress(value)),
    };
    const result = await settle(() => handler(leases.map((l) => l.job), ctx));
    // Jobs handed back when close() timed out are not reported again.
    this.end(leases.filter((l) => !l.wasCutOff));
    const outcomes = outcomesOfBatch(result, leases);
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

  private async finish(lease: JobLease, outcome: JobOutcome): Promise<void> {
    this.count(await lease.report(outcome));
  }

  private async release(lease: JobLease): Promise<void> {
    if (await lease.release()) this.stats.released++;
  }
}

/** Runs a handler, turning both a throw and a rejection into a value (a sync throw included). */
async function settle<T>(fn: () => T | Promise<T>): Promise<HandlerResult<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error };
  }
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

function checkInt(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer in ${min}–${max}, got ${value}`);
  return value;
}

function defaultOnError(err: unknown, where: { phase: WorkerPhase; jobId?: string }): void {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`[sluice worker] ${where.phase}${where.jobId ? ` ${where.jobId}` : ""}: ${message}`);
}
