/**
 * Outcomes of finished jobs, sent as acks on a lease request that also asks for the next jobs
 * (one request, one server write, where complete + lease would be two of each). Outcomes of jobs
 * that finish in the same turn share a request.
 */
import type { Confirmed, JobLease, JobOutcome, WorkerPhase } from "./job-lease.js";
import { isAcksUnknownError } from "./lease-errors.js";
import type { LeaseRequests } from "./lease-requests.js";
import type { Slot, Slots } from "./slots.js";
import { nextTurn } from "./timers.js";
import type { CompleteAck, FailAck, LeaseResponse, LeasedJob } from "./wire.js";

/** Acks one lease request carries at most (the server's limit). */
const maxAcksPerRequest = 100;

/** A finished job's outcome waiting to ride on the next ack-carrying lease request. */
export interface PendingAck {
  lease: JobLease;
  outcome: JobOutcome;
  ack: { kind: "complete"; ack: CompleteAck } | { kind: "fail"; ack: FailAck };
  slot: Slot;
  /** Resolves the job's unit with what the server confirmed (a refusal went to onError). */
  done: (confirmed: Confirmed) => void;
}

export interface AckBatcherDeps {
  slots: Slots;
  requests: LeaseRequests;
  /** True once close() began: ack requests then ask for no jobs. */
  isClosing(): boolean;
  /** Runs the jobs an ack request leased (or hands them back when closing). */
  start(jobs: LeasedJob[]): void;
  /** Makes close() wait for `work`. */
  track(work: Promise<void>, phase: WorkerPhase): void;
}

export class AckBatcher {
  /** Outcomes of finished jobs for the next ack-carrying lease request, sent once this turn ends. */
  private pending: PendingAck[] = [];
  private scheduled = false;
  /** Set when the server refused an ack-carrying lease as malformed (a server from before acks). */
  private unsupported = false;

  constructor(private readonly deps: AckBatcherDeps) {}

  /** False once the server turned acks down: outcomes then go through their own routes. */
  get supported(): boolean {
    return !this.unsupported;
  }

  queue(pending: PendingAck): void {
    this.pending.push(pending);
    if (this.scheduled) return;
    this.scheduled = true;
    // Outcomes of jobs that finish in this turn (a lease answer's worth of fast handlers) share a request.
    nextTurn(() => this.flush());
  }

  /** Sends every queued outcome now. */
  flush(): void {
    this.scheduled = false;
    // Tracked: a request sent as close() begins may still lease jobs, which close() hands back.
    while (this.pending.length > 0) this.deps.track(this.send(this.pending.splice(0, maxAcksPerRequest)), "lease");
  }

  /**
   * One lease request carrying these outcomes and asking for as many jobs as they free slots
   * (none once closing). The slots pass to the request's reservation, so the lease loops don't
   * also ask for them. An answer that doesn't come back leaves the outcomes unconfirmed: each is
   * then reported through its own route, with that route's retries — one the server did apply
   * answers 409, which onError hears as for any lost race.
   */
  private async send(group: PendingAck[]): Promise<void> {
    const { slots } = this.deps;
    for (const a of group) a.slot.release(false);
    slots.reserve(group.length);
    const ordered = [...group.filter((a) => a.ack.kind === "complete"), ...group.filter((a) => a.ack.kind === "fail")];
    const complete = ordered.flatMap((a) => (a.ack.kind === "complete" ? [a.ack.ack] : []));
    const fail = ordered.flatMap((a) => (a.ack.kind === "fail" ? [a.ack.ack] : []));
    let res: LeaseResponse;
    try {
      res = (await this.deps.requests.ack(this.deps.isClosing() ? 0 : group.length, complete, fail)).body;
    } catch (err) {
      if (isAcksUnknownError(err)) this.unsupported = true;
      slots.unreserve(group.length);
      slots.wake();
      await Promise.all(ordered.map(async (a) => a.done(await a.lease.report(a.outcome))));
      return;
    }
    slots.unreserve(group.length);
    ordered.forEach((a, i) => {
      const result = res.results?.[i];
      if (result && !result.ok) a.lease.ackRefused(a.ack.kind, result.error);
      a.done(result && !result.ok ? undefined : a.ack.kind);
    });
    if (res.jobs.length < group.length) slots.wake();
    this.deps.start(res.jobs);
  }
}
