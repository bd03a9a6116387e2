/**
 * The batch runner, on the injected clock: moves every unfinished batch along, then sleeps
 * `intervalMs` (jobs end on any node: their counts are read from the store, off the jobs' own
 * path) or until a batch is created or canceled here. One pass at a time; on every node.
 */
import type { Clock, TimerHandle } from "../clock.js";
import type { BatchService } from "./batch-service.js";

export interface BatchRunner {
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

export const batchRunnerIntervalMs = 2_000;

export function startBatchRunner(p: { batches: BatchService; clock: Clock; onError: (err: unknown) => void; intervalMs?: number }): BatchRunner {
  const intervalMs = p.intervalMs ?? batchRunnerIntervalMs;
  let timer: TimerHandle | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const arm = (): void => {
    timer?.cancel();
    if (!stopped) timer = p.clock.setTimer(intervalMs, () => void runOnce());
  };
  const runOnce = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = p.batches
      .advanceAll()
      .catch((err: unknown) => p.onError(err))
      .finally(() => {
        running = undefined;
        if (again && !stopped) {
          again = false;
          void runOnce();
        } else arm();
      });
    return running;
  };
  const unsubscribe = p.batches.onChange(() => void runOnce());
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

