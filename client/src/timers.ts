/**
 * Time, injected: the worker's heartbeats, backoffs and waits all go through a Timers object so
 * tests can drive them by hand instead of sleeping on wall time.
 */
export interface Timers {
  nowMs(): number;
  /** Runs `fn` once after `delayMs`; returns a function that cancels it. */
  schedule(delayMs: number, fn: () => void): () => void;
}

/** setTimeout's longest delay: a longer one (a 30-day wait) fires after 1 ms instead. */
const maxTimeoutDelayMs = 2 ** 31 - 1;

export const systemTimers: Timers = {
  nowMs: () => Date.now(),
  schedule(delayMs, fn) {
    // Longer delays go in steps of at most maxTimeoutDelayMs, re-armed until the full delay has passed.
    let leftMs = Math.max(0, delayMs);
    let handle: ReturnType<typeof setTimeout>;
    const arm = (): void => {
      const stepMs = Math.min(leftMs, maxTimeoutDelayMs);
      leftMs -= stepMs;
      handle = setTimeout(leftMs > 0 ? arm : fn, stepMs);
    };
    arm();
    return () => clearTimeout(handle);
  },
};

/** Resolves after `delayMs`, or at once (resolving, not rejecting) when `signal` aborts. */
export function sleep(timers: Timers, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const cancel = timers.schedule(delayMs, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Runs `fn` once the current turn's callbacks and microtasks are done: a yield, not a delay, so
 * it doesn't go through (possibly frozen) injected Timers — work queued in this turn is batched.
 */
export function nextTurn(fn: () => void): void {
  // setImmediate is Node's (the SDK also runs in browsers, where only setTimeout exists); looked
  // up on globalThis because the SDK compiles without Node's type declarations.
  const immediate = (globalThis as { setImmediate?: (callback: () => void) => unknown }).setImmediate;
  if (typeof immediate === "function") immediate(fn);
  else setTimeout(fn, 0);
}
