import { describe, expect, it } from "vitest";
import { LimitedLease, leaseAllowance, refillBucket, spendTokens, tenantAdmits } from "../../src/core/lease-limits.js";

describe("the token bucket (rateLimitPerSecond), on an injected time", () => {
  it("starts full, refills at the rate, never above one second's worth", () => {
    const t0 = 1_000_000;
    let b = refillBucket(undefined, 5, t0);
    expect(b).toEqual({ tokens: 5, atMs: t0 });
    b = spendTokens(b, 5);
    expect(refillBucket(b, 5, t0 + 100)).toEqual({ tokens: 0.5, atMs: t0 + 100 });
    expect(refillBucket(b, 5, t0 + 10_000).tokens).toBe(5);
    // A clock that steps back does not mint tokens.
    expect(refillBucket({ tokens: 1, atMs: t0 }, 5, t0 - 5_000)).toEqual({ tokens: 1, atMs: t0 });
  });

  it("lets a lease start only whole tokens, and says when the next one comes", () => {
    const t0 = 2_000_000;
    const b = refillBucket(spendTokens(refillBucket(undefined, 2, t0), 2), 2, t0 + 250);
    expect(b.tokens).toBe(0.5);
    expect(leaseAllowance({ wanted: 10, limits: { rateLimitPerSecond: 2 }, running: 0, bucket: b })).toEqual({ allowed: 0, limitedBy: "rateLimitPerSecond", retryAtMs: t0 + 500 });
    const later = refillBucket(b, 2, t0 + 1_250);
    expect(leaseAllowance({ wanted: 10, limits: { rateLimitPerSecond: 2 }, running: 0, bucket: later })).toEqual({ allowed: 2, limitedBy: "rateLimitPerSecond", retryAtMs: t0 + 1_250 });
    expect(leaseAllowance({ wanted: 1, limits: { rateLimitPerSecond: 2 }, running: 0, bucket: later })).toEqual({ allowed: 1 });
  });
});

describe("concurrency caps", () => {
  it("maxRunning leaves what is free; the tighter of the two limits names itself", () => {
    expect(leaseAllowance({ wanted: 10, limits: { maxRunning: 4 }, running: 1 })).toEqual({ allowed: 3, limitedBy: "maxRunning" });
    expect(leaseAllowance({ wanted: 10, limits: { maxRunning: 4 }, running: 6 })).toEqual({ allowed: 0, limitedBy: "maxRunning" });
    expect(leaseAllowance({ wanted: 2, limits: { maxRunning: 4 }, running: 1 })).toEqual({ allowed: 2 });
    const bucket = { tokens: 1.5, atMs: 0 };
    expect(leaseAllowance({ wanted: 10, limits: { maxRunning: 4, rateLimitPerSecond: 3 }, running: 0, bucket })).toMatchObject({ allowed: 1, limitedBy: "rateLimitPerSecond" });
  });
  it("maxRunningPerTenant admits a tenant below its cap", () => {
    expect(tenantAdmits(1, { maxRunningPerTenant: 2 })).toBe(true);
    expect(tenantAdmits(2, { maxRunningPerTenant: 2 })).toBe(false);
    expect(tenantAdmits(1_000, {})).toBe(true);
  });
});

describe("one limited lease, from what its write read", () => {
  it("says what to read, how many may start, the bucket to write back and what held it", () => {
    expect(LimitedLease.reads({ maxRunning: 2 })).toEqual({ running: true, bucket: false });
    expect(LimitedLease.reads({ rateLimitPerSecond: 2 })).toEqual({ running: false, bucket: true });
    const t0 = 3_000_000;
    const lease = new LimitedLease({ wanted: 10, limits: { rateLimitPerSecond: 4, maxRunning: 5 }, nowMs: t0, running: 2, storedBucket: { tokens: 0, atMs: t0 - 500 } });
    expect(lease.allowance).toEqual({ allowed: 2, limitedBy: "rateLimitPerSecond", retryAtMs: t0 });
    expect(lease.finish(2, true)).toEqual({ bucket: { tokens: 0, atMs: t0 }, hold: { by: "rateLimitPerSecond", retryAtMs: t0 } });
    expect(lease.finish(2, false).hold).toBeUndefined();
  });

  it("with tenants only: every wanted job may start, and a tenant's hold is the lease's", () => {
    const lease = new LimitedLease({ wanted: 3, limits: { maxRunningPerTenant: 1 }, nowMs: 0, running: 0, storedBucket: undefined });
    expect(lease.allowance).toEqual({ allowed: 3 });
    expect(lease.finish(1, true, { capped: true })).toEqual({ bucket: undefined, hold: { by: "maxRunningPerTenant" } });
    expect(lease.finish(1, true, { capped: true, retryAtMs: 7 }).hold).toEqual({ by: "rateLimitPerTenantPerSecond", retryAtMs: 7 });
  });
});
