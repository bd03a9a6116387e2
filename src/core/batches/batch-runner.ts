/**
 * The batch runner, on the injected clock: moves every unfinished batch along, then sleeps
 * `intervalMs` (jobs end on any node: their counts are read from the store, off the jobs' own
 * path) or until a batch is created or canceled here. One pass at a time; on every node.
 */
import type { Clock } from "../clock.js";
import { type PassLoop, startPassLoop } from "../pass-loop.js";
import type { BatchService } from "./batch-service.js";

export type BatchRunner = PassLoop;

export const batchRunnerIntervalMs = 2_000;

export function startBatchRunner(p: { batches: BatchService; clock: Clock; onError: (err: unknown) => void; intervalMs?: number }): BatchRunner {
  const intervalMs = p.intervalMs ?? batchRunnerIntervalMs;
  return startPassLoop({
    clock: p.clock,
    pass: async () => {
      await p.batches.advanceAll();
      return intervalMs;
    },
    retryMs: intervalMs,
    onChange: (listener) => p.batches.onChange(listener),
    onError: p.onError,
  });
}
