/**
 * The scheduler loop, on the injected clock: fires due schedules, then sleeps until the next run
 * is due — at most `recheckMs`, so schedules written by another node are picked up — or until a
 * local write may have made one due sooner. One pass at a time; on every node (the store's
 * compare-and-set makes each run one job whichever node fires it).
 */
import type { Clock } from "../clock.js";
import { type PassLoop, startPassLoop } from "../pass-loop.js";
import type { ScheduleService } from "./schedule-service.js";

export type Scheduler = PassLoop;

export const schedulerRecheckMs = 5_000;

export function startScheduler(p: { schedules: ScheduleService; clock: Clock; onError: (err: unknown) => void; recheckMs?: number }): Scheduler {
  const recheckMs = p.recheckMs ?? schedulerRecheckMs;
  return startPassLoop({
    clock: p.clock,
    pass: async () => {
      await p.schedules.runDue();
      const nextMs = await p.schedules.nextDueAtMs();
      return nextMs === undefined ? recheckMs : Math.min(recheckMs, nextMs - p.clock.nowMs());
    },
    retryMs: recheckMs,
    onChange: (listener) => p.schedules.onChange(listener),
    onError: p.onError,
  });
}
