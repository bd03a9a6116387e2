/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff and Jitter"):
 * many workers retrying against a restarting server spread out instead of arriving together.
 */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
}

export const defaultBackoff: BackoffPolicy = { baseMs: 100, capMs: 5_000 };

/** Delay before retry number `retry` (0 = the first retry). */
export function backoffDelayMs(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(retry, 30));
  return Math.floor(random() * ceiling);
}
