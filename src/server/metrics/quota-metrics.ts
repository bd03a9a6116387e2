/** Per-account quotas in /metrics: each configured limit, and the requests each refused. */
import { Counter, Gauge, type Registry } from "prom-client";
import type { AccountQuotas, QuotaName } from "../../core/index.js";

export interface QuotaTelemetry {
  refused(accountId: string, quota: QuotaName): void;
}

/** `limits`: every account with a quota (read at each scrape, so a credentials reload shows). */
export function quotaMetrics(registry: Registry, limits: () => Iterable<[string, AccountQuotas]>): QuotaTelemetry {
  const registers = [registry];
  const refusals = new Counter({
    name: "sluice_quota_refusals_total",
    help: "Requests refused for an account's quota (OverLimit, or RequestThrottled / 429 RateLimited for its rate).",
    labelNames: ["account", "quota"] as const,
    registers,
  });
  new Gauge({
    name: "sluice_account_quota",
    help: "An account's quota: maxQueues, maxMessagesPerQueue, maxBytesPerQueue, requestsPerSecond (per node) or maxBlobBytes.",
    labelNames: ["account", "quota"] as const,
    registers,
    collect() {
      this.reset();
      for (const [account, quotas] of limits()) {
        for (const [quota, value] of Object.entries(quotas)) if (value !== undefined) this.set({ account, quota }, value);
      }
    },
  });
  return { refused: (account, quota) => refusals.inc({ account, quota }) };
}
