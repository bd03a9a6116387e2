/**
 * The server's Prometheus metrics (docs/operations.md lists every one): one registry per server,
 * fed by the request, queue and job observers the composition root wires, and rendered by
 * GET /metrics. Per-queue gauges are computed at scrape time from the store's cheap depth read.
 */
import { Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { AccountQuotas } from "../../core/index.js";
import type { RequestObserver } from "../../protocols/http/request-outcome.js";
import type { WebhookAttemptReport } from "../../protocols/jobs/index.js";
import type { JobEventFacts } from "../job-event-facts.js";
import { seriesOfAccount } from "./account-series.js";
import { eventLoopLagMetric } from "./event-loop-lag.js";
import { jobMetrics } from "./job-metrics.js";
import { QueueGauges, type QueueGaugeSources } from "./queue-gauges.js";
import { QueueLabels } from "./queue-labels.js";
import { type QueueTrafficObserver, queueTrafficMetrics } from "./queue-traffic-metrics.js";
import { requestMetrics } from "./request-metrics.js";
import { type QuotaTelemetry, quotaMetrics } from "./quota-metrics.js";
import { type StoreTelemetry, storeMetrics } from "./store-metrics.js";
import { webhookMetrics } from "./webhook-metrics.js";

export interface ServerMetrics {
  onRequestDone: RequestObserver;
  queueTraffic: QueueTrafficObserver;
  onJobEvent: (facts: JobEventFacts) => void;
  onWebhookAttempt: (report: WebhookAttemptReport) => void;
  store: StoreTelemetry;
  /** One event-loop lateness sample (event-loop-lag.ts). */
  eventLoopLag: (lateMs: number) => void;
  /** Requests refused for an account's quota (quota-metrics.ts). */
  quotas: QuotaTelemetry;
  /**
   * The exposition text, gauges refreshed first: everything, or with `accountId` only that
   * account's per-queue series (account-series.ts).
   */
  render(accountId?: string): Promise<{ contentType: string; body: string }>;
}

/** `accountId`: the server's own account (--account-id), which its queues' series are labelled with. */
export function createServerMetrics(p: {
  version: string;
  accountId: string;
  queueLabelLimit: number;
  sources: QueueGaugeSources;
  /** Every account with a quota, read at each scrape. */
  quotaLimits?: () => Iterable<[string, AccountQuotas]>;
}): ServerMetrics {
  const registry = new Registry();
  // CPU, memory, event-loop lag, GC, handles: prom-client's standard process_* and nodejs_* set.
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters, which `promtool check metrics` rejects; their per-type series
  // (nodejs_active_handles{type} …) stay, and sum to the same number.
  for (const name of ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"]) registry.removeSingleMetric(name);
  new Gauge({ name: "sluice_build_info", help: "Always 1; the version label says which Sluice is running.", labelNames: ["version"] as const, registers: [registry] }).set(
    { version: p.version },
    1,
  );
  const labels = new QueueLabels(p.queueLabelLimit, p.accountId);
  const gauges = new QueueGauges(registry, labels, p.sources);
  return {
    onRequestDone: requestMetrics(registry),
    queueTraffic: queueTrafficMetrics(registry, labels),
    onJobEvent: jobMetrics(registry, labels),
    onWebhookAttempt: webhookMetrics(registry),
    store: storeMetrics(registry),
    eventLoopLag: eventLoopLagMetric(registry),
    quotas: quotaMetrics(registry, p.quotaLimits ?? (() => [])),
    async render(accountId) {
      await gauges.refresh();
      const body = await registry.metrics();
      return { contentType: registry.contentType, body: accountId === undefined ? body : seriesOfAccount(body, accountId) };
    },
  };
}
