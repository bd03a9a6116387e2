/**
 * Everything close() waits for — handlers with their reports, ack requests, hand-backs — each
 * with the leases whose handler it runs (none for the rest): once close()'s timeout has cut all
 * of a unit's handlers off, it is no longer waited for.
 */
import type { JobLease, LeaseDeps, WorkerPhase } from "./job-lease.js";
import { ShortLivedSet } from "./short-lived-set.js";

export class WorkUnits {
  private readonly units = new ShortLivedSet<{ unit: Promise<void>; leases: readonly JobLease[] }>();

  constructor(private readonly onError: LeaseDeps["onError"]) {}

  /** Makes close() wait for `work` (unless close()'s timeout cut off all of `leases`' handlers). */
  track(work: Promise<void>, phase: WorkerPhase, leases: readonly JobLease[] = []): void {
    // Units report their own failures; a rejection here would be a bug in the worker itself.
    const unit = work.catch((err: unknown) => this.onError(err, { phase }));
    const entry = { unit, leases };
    this.units.add(entry);
    void unit.finally(() => this.units.delete(entry));
  }

  /** The units close() still waits for: all but those whose every handler was cut off. */
  waited(): Promise<void>[] {
    return [...this.units].flatMap(({ unit, leases }) => (leases.length > 0 && leases.every((l) => l.wasCutOff) ? [] : [unit]));
  }
}
