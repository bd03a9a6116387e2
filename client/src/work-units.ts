/**
 * Everything close() waits for — handlers with their reports, ack requests, hand-backs — each
 * with the leases whose handler it runs (none for the rest): once close()'s timeout has cut all
 * of a unit's handlers off, it is no longer waited for.
 */
import type { JobLease, LeaseDeps, WorkerPhase } from "./job-lease.js";

export class WorkUnits {
  private readonly units = new Map<Promise<void>, readonly JobLease[]>();

  constructor(private readonly onError: LeaseDeps["onError"]) {}

  /** Makes close() wait for `work` (unless close()'s timeout cut off all of `leases`' handlers). */
  track(work: Promise<void>, phase: WorkerPhase, leases: readonly JobLease[] = []): void {
    // Units report their own failures; a rejection here would be a bug in the worker itself.
    const unit = work.catch((err: unknown) => this.onError(err, { phase }));
    this.units.set(unit, leases);
    void unit.finally(() => this.units.delete(unit));
  }

  /** The units close() still waits for: all but those whose every handler was cut off. */
  waited(): Promise<void>[] {
    return [...this.units].flatMap(([unit, leases]) => (leases.length > 0 && leases.every((l) => l.wasCutOff) ? [] : [unit]));
  }
}
