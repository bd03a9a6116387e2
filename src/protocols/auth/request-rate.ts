/**
 * Each account's requests-a-second quota (docs/security.md, "Quotas"), on both protocols: a token
 * bucket per account holding one second's worth, so a burst up to the rate passes and a steady
 * stream above it is refused (RateLimited) before its body is decoded. Per node: N nodes let an
 * account through up to N times its rate.
 */
import { SluiceError } from "../../core/index.js";

interface Bucket {
  tokens: number;
  atMs: number;
}

export interface RequestRateOptions {
  /** The account's requests a second (by its 12-digit id), undefined when it has no quota. */
  limitOf: (accountId: string) => number | undefined;
  nowMs: () => number;
  onRefused?: (accountId: string) => void;
}

export class RequestRate {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly o: RequestRateOptions) {}

  /** Takes one request from the account's allowance, or throws RateLimited. */
  take(accountId: string): void {
    const rate = this.o.limitOf(accountId);
    if (rate === undefined) return;
    const nowMs = this.o.nowMs();
    let bucket = this.buckets.get(accountId);
    if (bucket === undefined) {
      bucket = { tokens: rate, atMs: nowMs };
      this.buckets.set(accountId, bucket);
    } else {
      bucket.tokens = Math.min(rate, bucket.tokens + (Math.max(0, nowMs - bucket.atMs) * rate) / 1000);
      bucket.atMs = nowMs;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return;
    }
    this.o.onRefused?.(accountId);
    throw new SluiceError("RateLimited", `Account ${accountId} is over its quota of ${rate} requests a second; retry after a second.`);
  }
}
