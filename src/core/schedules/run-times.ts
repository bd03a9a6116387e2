/**
 * A schedule's run times. A fixed interval is arithmetic, done here; a cron expression is compiled
 * by the injected CronCompiler (the composition root wraps a well-kept cron library: core imports
 * no package), which owns the hard parts — fields, time zones, DST gaps and repeats.
 */

export interface RunTimes {
  /** The first run strictly after `afterMs`, or undefined if there is none (an expression that never matches again). */
  nextAfter(afterMs: number): number | undefined;
  /** Up to `n` runs at or before `atMs`, newest first. */
  latestAtOrBefore(atMs: number, n: number): number[];
}

/**
 * Compiles a cron expression (5 fields, or 6 with seconds first) in an IANA time zone. Throws a
 * SluiceError ValidationFailed that names what is wrong with the expression or the zone.
 */
export type CronCompiler = (expression: string, timezone: string) => RunTimes;

/**
 * Every `everySeconds`, aligned to the Unix epoch (an hourly schedule runs on the hour, UTC), so
 * the run times don't depend on when the schedule was written or by which node.
 */
export function everySecondsRunTimes(everySeconds: number): RunTimes {
  const periodMs = everySeconds * 1000;
  return {
    nextAfter: (afterMs) => (Math.floor(afterMs / periodMs) + 1) * periodMs,
    latestAtOrBefore(atMs, n) {
      const out: number[] = [];
      for (let t = Math.floor(atMs / periodMs) * periodMs; out.length < n && t >= 0; t -= periodMs) out.push(t);
      return out;
    },
  };
}
