/**
 * A background pass run on the injected clock, one at a time, on every node: after each pass it
 * sleeps for the delay the pass answers (or `retryMs` after a failure), or until a local change
 * asks for another. A change during a pass runs one more pass once it ends.
 */
import type { Clock, TimerHandle } from "./clock.js";

export interface PassLoop {
  /** One pass now (also what the timer runs); resolves when it is done. */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

export function startPassLoop(p: {
  clock: Clock;
  /** Does the work; answers how long to sleep before the next pass. */
  pass: () => Promise<number>;
  /** How long to sleep after a failed pass. */
  retryMs: number;
  /** Subscribes to local changes that call for a pass now; answers the unsubscribe. */
  onChange: (listener: () => void) => () => void;
  onError: (err: unknown) => void;
}): PassLoop {
  let timer: TimerHandle | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const arm = (delayMs: number): void => {
    timer?.cancel();
    if (!stopped) timer = p.clock.setTimer(Math.max(0, delayMs), () => void runOnce());
  };
  const runOnce = (): Promise<void> => {
    if (running) {
      again = true; // a change landed during the pass: look once more when it ends
      return running;
    }
    running = p
      .pass()
      .then(arm, (err: unknown) => {
        p.onError(err);
        arm(p.retryMs);
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
  const unsubscribe = p.onChange(() => void runOnce());
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
