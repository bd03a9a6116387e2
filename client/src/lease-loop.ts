/**
 * The worker's lease loop: while not closing, wait for a free slot, long-poll for as many jobs as
 * there are free slots, and start them. Transient failures back off and retry; a
 * refusal no retry fixes stops the worker.
 */
import { backoffDelayMs, defaultBackoff } from "./backoff.js";
import type { LeaseDeps } from "./job-lease.js";
import { isFatalLeaseError } from "./lease-errors.js";
import type { LeaseRequests } from "./lease-requests.js";
import type { Slots } from "./slots.js";
import { sleep } from "./timers.js";
import type { LeasedJob } from "./wire.js";

export interface LeaseLoopDeps {
  deps: LeaseDeps;
  slots: Slots;
  requests: LeaseRequests;
  /** Aborted when close() begins: ends the long poll in flight and any backoff. */
  stopLeasing: AbortSignal;
  isClosing(): boolean;
  /** Runs freshly leased jobs (or hands them back when close() began meanwhile). */
  start(jobs: LeasedJob[]): void;
  /** The server refused a lease request for good: the worker stops and says why. */
  onFatal(err: unknown): void;
}

/** Runs until close() begins. */
export async function leaseLoop(d: LeaseLoopDeps): Promise<void> {
  const { deps, slots } = d;
  let failures = 0;
  while (!d.isClosing()) {
    const free = slots.free;
    if (free <= 0) {
      await slots.waitForFree();
      continue;
    }
    const ask = free;
    let jobs: LeasedJob[];
    slots.reserve(ask);
    try {
      jobs = await d.requests.lease(ask, d.stopLeasing);
      if (failures > 0) failures = 0;
    } catch (err) {
      if (d.isClosing()) break;
      if (isFatalLeaseError(err)) {
        // Retrying would only repeat the refusal while the worker looked healthy: stop, and say why.
        d.onFatal(err);
        break;
      }
      failures++;
      // Report the first failure of an outage and then every 20th retry, not each one.
      if (failures % 20 === 1) deps.onError(err, { phase: "lease" });
      await sleep(deps.timers, backoffDelayMs(failures - 1, defaultBackoff, deps.random), d.stopLeasing);
      continue;
    } finally {
      slots.unreserve(ask);
    }
    d.start(jobs);
  }
}
