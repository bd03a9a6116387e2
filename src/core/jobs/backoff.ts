/** Retry delays: exponential with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"). */
import type { BackoffSettings } from "../job-settings.js";

/**
 * The delay before the next attempt after `attempt` (1-based) failed: uniform in
 * [0, min(cap, base · 2^(attempt−1))). Full jitter spreads a burst of failures (a model server
 * that fell over) instead of retrying them in lockstep. `retryAfterSeconds`, when the worker gives
 * one (a rate limit's Retry-After), replaces the computed delay.
 */
export function retryDelayMs(p: { attempt: number; backoff: BackoffSettings; random: number; retryAfterSeconds?: number }): number {
  if (p.retryAfterSeconds !== undefined) return p.retryAfterSeconds * 1000;
  const exponent = Math.min(Math.max(p.attempt - 1, 0), 30);
  const ceilingMs = Math.min(p.backoff.capSeconds, p.backoff.baseSeconds * 2 ** exponent) * 1000;
  return Math.floor(p.random * ceilingMs);
}
