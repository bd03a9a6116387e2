/**
 * A queue's limits on starting jobs, as pure decisions on an injected time: a token bucket (at most
 * `rateLimitPerSecond` starts per second, for every worker and node together), a cap on jobs
 * running at once (`maxRunning`), and per tenant a cap (`maxRunningPerTenant`) and a bucket of its own
 * (`rateLimitPerTenantPerSecond`: a job without a tenant is not held by it). A store evaluates
 * them inside the lease's write, from the counts and the bucket it reads there, so two leases
 * can't both take the last slot. A lease held back by a limit waits (long poll), never fails.
 */

export interface LeaseLimits {
  rateLimitPerSecond?: number;
  maxRunning?: number;
  maxRunningPerTenant?: number;
  rateLimitPerTenantPerSecond?: number;
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

/** What held a lease back while jobs were ready, and when a token is next due (rates). */
export interface LeaseHold {
  by: "rateLimitPerSecond" | "maxRunning" | "maxRunningPerTenant" | "rateLimitPerTenantPerSecond";
  retryAtMs?: number;
}

/**
 * The hold a lease that got fewer jobs than it asked for reports: the queue's own limits first,
 * then a tenant's rate (it has a time to retry at), then a tenant's cap.
 */
export function leaseHold(allowance: LeaseAllowance, tenantRetryAtMs: number | undefined, tenantCapped: boolean): LeaseHold | undefined {
  if (allowance.limitedBy !== undefined) return { by: allowance.limitedBy, retryAtMs: allowance.retryAtMs };
  if (tenantRetryAtMs !== undefined) return { by: "rateLimitPerTenantPerSecond", retryAtMs: tenantRetryAtMs };
  return tenantCapped ? { by: "maxRunningPerTenant" } : undefined;
}

/** Whether a tenant was passed by for its cap with a job ready; when one passed by for its rate gets a token. */
export interface TenantsHeld {
  capped: boolean;
  retryAtMs?: number;
}

/**
 * One lease on a queue with limits, inside the store's write: from the running count and the
 * stored bucket read there (after the queue's lease lock, where there is one), how many may start;
 * then, from what started, the bucket to write back and what held the lease back.
 */
export class LimitedLease {
  readonly allowance: LeaseAllowance;
  /** The queue's bucket refilled to now (undefined: no rateLimitPerSecond). */
  private readonly bucket: TokenBucket | undefined;

  constructor(p: { wanted: number; limits: LeaseLimits | undefined; nowMs: number; running: number; storedBucket: TokenBucket | undefined }) {
    const limits = p.limits ?? {};
    this.bucket = limits.rateLimitPerSecond === undefined ? undefined : refillBucket(p.storedBucket, limits.rateLimitPerSecond, p.nowMs);
    this.allowance = leaseAllowance({ wanted: p.wanted, limits, running: p.running, bucket: this.bucket });
  }

  /** Whether the store reads the running count (else it passes 0) and the stored bucket. */
  static reads(limits: LeaseLimits | undefined): { running: boolean; bucket: boolean } {
    return { running: limits?.maxRunning !== undefined, bucket: limits?.rateLimitPerSecond !== undefined };
  }

  /** After `started` jobs started (`short`: fewer than the lease asked for): the bucket to write, and the hold to answer. */
  finish(started: number, short: boolean, tenants: TenantsHeld = { capped: false }): { bucket?: TokenBucket; hold?: LeaseHold } {
    const hold = short ? leaseHold(this.allowance, tenants.retryAtMs, tenants.capped) : undefined;
    return { bucket: this.bucket && spendTokens(this.bucket, started), hold };
  }
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
  return (
    limits !== undefined &&
    (limits.rateLimitPerSecond !== undefined || limits.maxRunning !== undefined || limits.maxRunningPerTenant !== undefined || limits.rateLimitPerTenantPerSecond !== undefined)
  );
}

/**
 * The buckets of the tenants one lease serves: refilled when first asked for, spent one job at a
 * time, and handed back (`spent`) for the store to write. A tenant with no whole token is passed
 * by; `retryAtMs` is when the first of those passed by with a job ready gets one.
 */
export class TenantBuckets {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly touched = new Set<string>();
  /** Stored buckets handed in by `read` (undefined: none). */
  private readonly stored = new Map<string, TokenBucket | undefined>();
  retryAtMs: number | undefined;

  constructor(
    private readonly ratePerSecond: number,
    private readonly nowMs: number,
    /** The stored bucket of a tenant not handed in by `read` (undefined: none, a full one). */
    private readonly load: (tenant: string) => TokenBucket | undefined = () => undefined,
  ) {}

  /** Of these tenants, those whose stored bucket this lease has not read yet: a store may read them together, then `read` them. */
  unread(tenants: readonly string[]): string[] {
    return tenants.filter((t) => !this.stored.has(t) && !this.buckets.has(t));
  }

  /** The stored buckets of `tenants`, as read (a tenant not in `found` has none). */
  read(tenants: readonly string[], found: ReadonlyArray<TokenBucket & { tenant: string }>): void {
    for (const t of tenants) this.stored.set(t, undefined);
    for (const f of found) this.stored.set(f.tenant, { tokens: f.tokens, atMs: f.atMs });
  }

  /** How many jobs the tenant may start now. */
  room(tenant: string): number {
    return Math.floor(this.bucket(tenant).tokens);
  }

  admits(tenant: string): boolean {
    return this.room(tenant) >= 1;
  }

  /** The tenant was passed by with a job ready: the lease waits at most until it has a token. */
  heldBack(tenant: string): void {
    const at = nextTokenAtMs(this.bucket(tenant), this.ratePerSecond);
    this.retryAtMs = this.retryAtMs === undefined ? at : Math.min(this.retryAtMs, at);
  }

  spend(tenant: string, started = 1): void {
    this.buckets.set(tenant, spendTokens(this.bucket(tenant), started));
    this.touched.add(tenant);
  }

  /**
   * Of the ready flows (a tenant each, or the ungrouped flow '': no tenant to limit), with the
   * `room` their cap leaves (undefined: no cap), those whose tenant has a whole token, the room cut
   * to its tokens; the others are held back (the lease waits at most until their next token).
   */
  admit(flows: ReadonlyArray<{ flow: string; room?: number }>): { admitted: Array<{ flow: string; room?: number }>; heldBack: string[] } {
    const admitted: Array<{ flow: string; room?: number }> = [];
    const heldBack: string[] = [];
    for (const f of flows) {
      const tokens = f.flow === "" ? Number.POSITIVE_INFINITY : this.room(f.flow);
      if (tokens < 1) {
        this.heldBack(f.flow);
        heldBack.push(f.flow);
      } else admitted.push(tokens === Number.POSITIVE_INFINITY ? f : { flow: f.flow, room: Math.min(tokens, f.room ?? tokens) });
    }
    return { admitted, heldBack };
  }

  /** The buckets this lease spent from, to be written. */
  spent(): Array<[tenant: string, bucket: TokenBucket]> {
    return [...this.touched].map((t) => [t, this.buckets.get(t)!]);
  }

  /** A bucket last written before this is full again, as good as none: the store may delete it. */
  staleBeforeMs(): number {
    return this.nowMs - Math.ceil((bucketCapacity(this.ratePerSecond) * 1000) / this.ratePerSecond);
  }

  private bucket(tenant: string): TokenBucket {
    let b = this.buckets.get(tenant);
    if (b === undefined) {
      const stored = this.stored.has(tenant) ? this.stored.get(tenant) : this.load(tenant);
      this.buckets.set(tenant, (b = refillBucket(stored, this.ratePerSecond, this.nowMs)));
    }
    return b;
  }
}
