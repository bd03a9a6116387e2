/**
 * Long-polling leases waiting for their first job, by queue, so that a submit can hand its job to
 * one of them inside its own write (JobStore.jobCreateMany's `handoff`). Otherwise the submit
 * commits and syncs, the woken lease commits and syncs again, and a job on an idle queue reaches
 * its worker two syncs after it was submitted instead of one. Nothing is answered earlier: the
 * lease's answer still waits for the commit of the write it ran in.
 */
import type { JobLeaseParams, JobLeaseResult } from "../job-store.js";

/** A parked lease, as its own poll loop holds it. */
export interface ParkedLease {
  /** Aborted when the lease is woken: a submit took it, or its own request's signal fired. */
  readonly signal: AbortSignal;
  /** After the wait: what a submit ran for it (undefined if it failed or created nothing), or undefined if none took it. */
  handoff(): Promise<JobLeaseResult | undefined> | undefined;
  /** Leaves the registry (idempotent); call once the wait is over. */
  unpark(): void;
}

/** A parked lease a submit took: its `params` go with the submit's write, then `deliver` what it gave. */
export interface ClaimedLease {
  params(nowMs: number): JobLeaseParams;
  deliver(result: JobLeaseResult | undefined): void;
}

/**
 * The abort reason of a claimed lease. One shared value: `abort()` without a reason builds a
 * DOMException with a stack trace each time, which showed when most leases are handed off.
 */
const claimedReason = Object.freeze({ claimed: true });

interface Entry {
  params: (nowMs: number) => JobLeaseParams;
  controller: AbortController;
  /** Set when a submit takes it: settles with what that submit's write leased. */
  delivered?: Promise<JobLeaseResult | undefined>;
}

export class ParkedLeases {
  private readonly byQueue = new Map<number, Set<Entry>>();

  park(queueId: number, params: (nowMs: number) => JobLeaseParams, signal?: AbortSignal): ParkedLease {
    const controller = new AbortController();
    const entry: Entry = { params, controller };
    let set = this.byQueue.get(queueId);
    if (!set) this.byQueue.set(queueId, (set = new Set()));
    set.add(entry);
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) controller.abort(signal.reason);
    let parked = true;
    return {
      signal: controller.signal,
      handoff: () => entry.delivered,
      unpark: () => {
        if (!parked) return;
        parked = false;
        signal?.removeEventListener("abort", onAbort);
        this.remove(queueId, entry);
      },
    };
  }

  /** Takes the oldest parked lease of the queue (and wakes it), or undefined if none waits. */
  claim(queueId: number): ClaimedLease | undefined {
    const set = this.byQueue.get(queueId);
    if (!set) return undefined;
    for (const entry of set) {
      this.remove(queueId, entry);
      if (entry.controller.signal.aborted) continue; // its request is gone or ending: not worth a lease
      let deliver!: (result: JobLeaseResult | undefined) => void;
      entry.delivered = new Promise((resolve) => (deliver = resolve));
      entry.controller.abort(claimedReason);
      return { params: entry.params, deliver };
    }
    return undefined;
  }

  private remove(queueId: number, entry: Entry): void {
    const set = this.byQueue.get(queueId);
    if (!set) return;
    set.delete(entry);
    if (set.size === 0) this.byQueue.delete(queueId);
  }
}
