/**
 * Background upkeep: deletes messages past their queue's retention period, in every account.
 * Receives already skip expired messages, so this only reclaims space; it runs every few seconds
 * on the injected clock (tests drive it with ManualClock) and never overlaps itself. A pass is cut
 * into small store writes with event-loop turns between them, so a deep backlog expiring at once
 * never holds requests up for longer than one slice.
 */
import type { Clock, TimerHandle, QueueService } from "../core/index.js";
import { everyAccountsQueues } from "./all-queues.js";

export interface Maintenance {
  /** One pass over every queue (also what the timer runs). */
  runOnce(): Promise<void>;
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

export const maintenanceIntervalMs = 5_000;

/** Lets requests run between two slices of a pass (setImmediate: after pending I/O callbacks). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function startMaintenance(p: {
  queues: QueueService;
  clock: Clock;
  intervalMs?: number;
  /** Messages deleted per store write (default expireSliceMessages). */
  sliceMessages?: number;
  /** Between two slices (default nextTurn). */
  between?: () => Promise<void>;
  onError: (err: unknown) => void;
}): Maintenance {
  const intervalMs = p.intervalMs ?? maintenanceIntervalMs;
  let timer: TimerHandle | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const turn = p.between ?? nextTurn;
  const between = async (): Promise<boolean> => {
    await turn();
    return !stopped;
  };

  async function pass(): Promise<void> {
    for await (const queue of everyAccountsQueues(p.queues)) {
      if (stopped) return;
      await p.queues.expireMessages(queue, { messages: p.sliceMessages, between });
    }
  }

  function runOnce(): Promise<void> {
    running ??= pass()
      .catch(p.onError)
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  function schedule(): void {
    if (stopped) return;
    timer = p.clock.setTimer(intervalMs, () => {
      void runOnce().then(schedule);
    });
  }

  schedule();
  return {
    runOnce,
    async stop() {
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}
