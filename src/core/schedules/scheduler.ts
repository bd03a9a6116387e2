/**
 * The scheduler loop, on the injected clock: fires due schedules, then sleeps until the next run
 * is due — at most `recheckMs`, so schedules written by another node are picked up — or until a
 * local write may have made one due sooner. One pass at a time; on every node (the store's
 * compare-and-set makes each run one job whichever node fires it).
 */
import type { Clock, TimerHandle } from "../clock.js";
import type { ScheduleService } from "./schedule-service.js";

export interface Scheduler {
  /** One pass now (also what the timer runs); resolves when it is done. */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

export const schedulerRecheckMs = 5_000;

export function startScheduler(p: { schedules: ScheduleService; clock: Clock; onError: (err: unknown) => void; recheckMs?: number }): Scheduler {
  const recheckMs = p.recheckMs ?? schedulerRecheckMs;
  let timer: TimerHandle | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const pass = async (): Promise<void> => {
    await p.schedules.runDue();
    const nextMs = await p.schedules.nextDueAtMs();
    return arm(nextMs === undefined ? recheckMs : nextMs - p.clock.nowMs());
  };
  const arm = (delayMs: number): void => {
    timer?.cancel();
    if (stopped) return;
    timer = p.clock.setTimer(Math.max(0, Math.min(recheckMs, delayMs)), () => void runOnce());
  };
  const runOnce = (): Promise<void> => {
    if (running) {
      again = true; // a write landed during the pass: look once more when it ends
      return running;
    }
    running = pass()
      .catch((err: unknown) => {
        p.onError(err);
        arm(recheckMs);
      })
      .finally(() => {
        running = undefined;
        if (again && !stopped) {
          again = false;
          void runOnce();
        }
      });
    return running;
  };
  const unsubscribe = p.schedules.onChange(() => void runOnce());
  void runOnce();
  return {
    runOnce,
    async stop() {
      stopped = true;
      unsubscribe();
      timer?.cancel();
      await running;
    },
  };
}
