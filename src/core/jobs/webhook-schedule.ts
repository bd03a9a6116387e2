/**
 * When to retry a webhook delivery: exponential from 5 s, doubling, capped at an hour, ±10 %
 * jitter (so a receiver that comes back isn't hit by every pending delivery in the same second),
 * for 72 hours after the event — comfortably more than a weekend's outage of 24 h. Then give up.
 */
export const webhookRetry = {
  firstDelayMs: 5_000,
  maxDelayMs: 3_600_000,
  giveUpAfterMs: 72 * 3_600_000,
  jitterFraction: 0.1,
  /** How long a claimed delivery is held before another claim may retry it (a crash mid-delivery). */
  claimMs: 60_000,
  /** One attempt's time limit, connect to last byte. */
  attemptTimeoutMs: 10_000,
} as const;

/**
 * The next attempt after `attempts` failed ones, or undefined when it is time to give up. A
 * receiver's `Retry-After` (`retryAfterMs`) pushes it later, never earlier, by at most the longest
 * backoff step (an hour): a receiver can slow its deliveries down, not switch them off.
 */
export function nextWebhookAttemptAtMs(p: { attempts: number; createdAtMs: number; nowMs: number; random: number; retryAfterMs?: number }): number | undefined {
  const base = Math.min(webhookRetry.maxDelayMs, webhookRetry.firstDelayMs * 2 ** Math.min(Math.max(p.attempts - 1, 0), 30));
  const jitter = 1 + webhookRetry.jitterFraction * (2 * p.random - 1);
  const backoff = p.nowMs + Math.round(base * jitter);
  const next = p.retryAfterMs === undefined ? backoff : Math.max(backoff, p.nowMs + Math.min(p.retryAfterMs, webhookRetry.maxDelayMs));
  return next - p.createdAtMs > webhookRetry.giveUpAfterMs ? undefined : next;
}
