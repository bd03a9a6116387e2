/**
 * The jobs' upkeep, on the injected clock (tests drive it with ManualClock): every second, running
 * jobs whose lease expired or whose attempt timed out are retried, failed or canceled; every
 * minute, finished jobs past their queue's resultTtlSeconds and expired idempotency keys are
 * pruned. Each loop never overlaps itself.
 */
import type { Clock, TimerHandle } from "../clock.js";
import type { JobService } from "./job-service.js";

export interface JobMaintenance {
  /** One pass of both loops now. */
  runOnce(): Promise<void>;
  /** Stops the timers and waits for passes in progress. */
  stop(): Promise<void>;
}

export const leaseSweepIntervalMs = 1_000;
export const pruneIntervalMs = 60_000;

export function startJobMaintenance(p: {
  jobs: JobService;
  clock: Clock;
  onError: (err: unknown) => void;
  sweepIntervalMs?: number;
  pruneIntervalMs?: number;
}): JobMaintenance {
  let stopped = false;
  const loops = [
    repeat(p.clock, p.sweepIntervalMs ?? leaseSweepIntervalMs, () => p.jobs.expireLeases(), p.onError, () => stopped),
    repeat(p.clock, p.pruneIntervalMs ?? pruneIntervalMs, () => p.jobs.prune(), p.onError, () => stopped),
  ];
  return {
    async runOnce() {
      await Promise.all(loops.map((l) => l.runOnce()));
    },
    async stop() {
      stopped = true;
      await Promise.all(loops.map((l) => l.stop()));
    },
  };
}

function repeat(clock: Clock, intervalMs: number, pass: () => Promise<unknown>, onError: (err: unknown) => void, isStopped: () => boolean) {
  let timer: TimerHandle | undefined;
  let running: Promise<void> | undefined;
  const runOnce = (): Promise<void> =>
    (running ??= pass()
      .then(() => undefined, onError)
      .finally(() => {
        running = undefined;
      }));
  const schedule = (): void => {
    if (isStopped()) return;
    timer = clock.setTimer(intervalMs, () => void runOnce().then(schedule));
  };
  schedule();
  return {
    runOnce,
    async stop() {
      timer?.cancel();
      await running;
    },
  };
}
