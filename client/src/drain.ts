/**
 * close()'s drain: stop leasing, send the outcomes already queued, and wait for everything the
 * worker still holds — or, once the timeout passes, for all but the handlers it cut off.
 */
import type { CloseOptions } from "./worker-options.js";
import type { Timers } from "./timers.js";
import type { WorkUnits } from "./work-units.js";

export interface DrainSteps {
  timers: Timers;
  /** Marks the worker closing, ends its lease requests and wakes the loops waiting for a slot. */
  stopLeasing(): void;
  /** Settles once every lease loop has returned. */
  loopsDone: Promise<void>;
  /** Sends the outcomes waiting for an ack request. */
  flushAcks(): void;
  units: WorkUnits;
  /** The timeout passed: hand back every job whose handler still runs, and stop waiting for it. */
  cutOffRunning(): void;
  /** Runs last, however the drain ended. */
  drained(): void;
}

export async function drain(steps: DrainSteps, opts: CloseOptions): Promise<void> {
  steps.stopLeasing();
  let timedOut = false;
  let wakeOnTimeout = (): void => {};
  const timeout = new Promise<void>((resolve) => (wakeOnTimeout = resolve));
  const cancel =
    opts.timeoutMs === undefined
      ? () => {}
      : steps.timers.schedule(opts.timeoutMs, () => {
          timedOut = true;
          steps.cutOffRunning();
          wakeOnTimeout();
        });
  try {
    await steps.loopsDone;
    steps.flushAcks(); // what finished as close() began; ask 0 jobs now
    for (;;) {
      const waited = steps.units.waited();
      if (waited.length === 0) break;
      // Units may add units (an ack request's answer leases a job, which goes back): look again.
      await (timedOut ? Promise.all(waited) : Promise.race([Promise.all(waited), timeout]));
    }
  } finally {
    cancel();
    steps.drained();
  }
}
