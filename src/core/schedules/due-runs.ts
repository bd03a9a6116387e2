/**
 * Which runs of a due schedule get a job now, and when it is due next: pure, on times passed in.
 * A run at most limits.schedules.missedAfterMs late is on time and always created; older ones
 * were missed (no server was running) and `catchUp` decides: none, the latest one, or all of them
 * (at most catchUpMaxRuns, the latest).
 */
import { limits } from "../limits.js";
import type { RunTimes } from "./run-times.js";
import type { CatchUp } from "./schedule.js";

export interface DueRuns {
  /** Run times to create a job for, oldest first (empty: not due, or every due run was skipped). */
  runs: number[];
  /** The first run after `nowMs`; undefined when none will come. */
  nextRunAtMs: number | undefined;
}

export function planDueRuns(p: { nextRunAtMs: number; nowMs: number; catchUp: CatchUp; times: RunTimes }): DueRuns {
  const s = limits.schedules;
  if (p.nextRunAtMs > p.nowMs) return { runs: [], nextRunAtMs: p.nextRunAtMs };
  const missedUntilMs = p.nowMs - s.missedAfterMs;
  const runs: number[] = [];
  let onTime: number | undefined = p.nextRunAtMs;
  if (p.nextRunAtMs <= missedUntilMs) {
    if (p.catchUp !== "none") {
      const missed = p.times.latestAtOrBefore(missedUntilMs, p.catchUp === "all" ? s.catchUpMaxRuns : 1);
      for (let i = missed.length - 1; i >= 0; i--) if (missed[i]! >= p.nextRunAtMs) runs.push(missed[i]!);
    }
    onTime = p.times.nextAfter(missedUntilMs);
  }
  // Forward from the first on-time run: a cron library's step is costly, and usually one run is due.
  let taken = 0;
  while (onTime !== undefined && onTime <= p.nowMs && taken < s.onTimeMaxRuns) {
    runs.push(onTime);
    taken++;
    onTime = p.times.nextAfter(onTime);
  }
  const nextRunAtMs = onTime !== undefined && onTime <= p.nowMs ? p.times.nextAfter(p.nowMs) : onTime;
  return { runs, nextRunAtMs };
}

/** The next `n` runs from `fromMs` on (itself included when it is a run). */
export function upcomingRuns(times: RunTimes, fromMs: number, n: number): number[] {
  const out: number[] = [];
  let t = times.nextAfter(fromMs - 1);
  while (t !== undefined && out.length < n) {
    out.push(t);
    t = times.nextAfter(t);
  }
  return out;
}

/** The idempotency key of a run's job: one key per schedule and run time, so a run is one job. */
export function scheduleRunKey(scheduleName: string, runAtMs: number): string {
  return `schedule:${scheduleName}:${new Date(runAtMs).toISOString()}`;
}
