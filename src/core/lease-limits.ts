/**
 * A queue's limits on starting jobs, as pure decisions on an injected time: a token bucket (at most
 * `rateLimitPerSecond` starts per second, for every worker and node together), a cap on jobs
 * running at once (`maxRunning`), and one per tenant (`maxRunningPerTenant`). A store evaluates
 * them inside the lease's write, from the counts and the bucket it reads there, so two leases
 * can't both take the last slot. A lease held back by a limit waits (long poll), never fails.
 */

export interface LeaseLimits {
  rateLimitPerSecond?: number;
  maxRunning?: number;
  maxRunningPerTenant?: number;
}

export interface TokenBucket {
  tokens: number;
  /** When `tokens` was last brought up to date. */
  atMs: number;
}

/** The bucket holds one second's worth of starts: a burst after an idle spell is at most the rate. */
export function bucketCapacity(ratePerSecond: number): number {
  return Math.max(1, ratePerSecond);
}

/** The bucket at `nowMs`: refilled at `ratePerSecond`, never above its capacity (a full bucket when new). */
export function refillBucket(bucket: TokenBucket | undefined, ratePerSecond: number, nowMs: number): TokenBucket {
  const capacity = bucketCapacity(ratePerSecond);
  if (!bucket) return { tokens: capacity, atMs: nowMs };
  const elapsedMs = Math.max(0, nowMs - bucket.atMs);
  return { tokens: Math.min(capacity, bucket.tokens + (elapsedMs * ratePerSecond) / 1000), atMs: Math.max(bucket.atMs, nowMs) };
}

/** When the bucket (as of its atMs) next holds a whole token. */
export function nextTokenAtMs(bucket: TokenBucket, ratePerSecond: number): number {
  if (bucket.tokens >= 1) return bucket.atMs;
  return bucket.atMs + Math.ceil(((1 - bucket.tokens) * 1000) / ratePerSecond);
}

export interface LeaseAllowance {
  /** Jobs this lease may start at most (≤ the `wanted` it was asked for). */
  allowed: number;
  /** The limit that cut it below `wanted`, if one did. */
  limitedBy?: "rateLimitPerSecond" | "maxRunning";
  /** rateLimitPerSecond: when a next start will be allowed. */
  retryAtMs?: number;
}

/**
 * How many of `wanted` jobs a lease may start, from the queue's running count and its refilled
 * bucket. Per-tenant caps are applied job by job as the lease picks (tenantAdmits).
 */
export function leaseAllowance(p: { wanted: number; limits: LeaseLimits; running: number; bucket?: TokenBucket }): LeaseAllowance {
  let allowed = p.wanted;
  let out: LeaseAllowance = { allowed };
  if (p.limits.maxRunning !== undefined) {
    const free = Math.max(0, p.limits.maxRunning - p.running);
    if (free < allowed) out = { allowed: (allowed = free), limitedBy: "maxRunning" };
  }
  const rate = p.limits.rateLimitPerSecond;
  if (rate !== undefined && p.bucket) {
    const whole = Math.floor(p.bucket.tokens);
    if (whole < allowed) out = { allowed: (allowed = whole), limitedBy: "rateLimitPerSecond", retryAtMs: nextTokenAtMs(p.bucket, rate) };
  }
  return out;
}

/** Takes `started` tokens from a refilled bucket (what the lease actually started, not what it was allowed). */
export function spendTokens(bucket: TokenBucket, started: number): TokenBucket {
  return { tokens: bucket.tokens - started, atMs: bucket.atMs };
}

/** Whether a tenant with `running` jobs may start one more. */
export function tenantAdmits(running: number, limits: LeaseLimits): boolean {
  return limits.maxRunningPerTenant === undefined || running < limits.maxRunningPerTenant;
}

/** True when any limit is set: a store takes the plain path (no counts, no bucket) otherwise. */
export function hasLeaseLimits(limits: LeaseLimits | undefined): limits is LeaseLimits {
  return limits !== undefined && (limits.rateLimitPerSecond !== undefined || limits.maxRunning !== undefined || limits.maxRunningPerTenant !== undefined);
}
