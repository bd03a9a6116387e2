/** Webhook delivery attempts by outcome: `sluice_webhook_deliveries_total`. */
import { Counter, type Registry } from "prom-client";
import type { WebhookAttemptReport } from "../../protocols/jobs/index.js";

const outcomeLabel = { delivered: "delivered", retrying: "failed_will_retry", gaveUp: "gave_up" } as const;

export function webhookMetrics(registry: Registry): (report: WebhookAttemptReport) => void {
  const total = new Counter({
    name: "sluice_webhook_deliveries_total",
    help: "Webhook delivery attempts by outcome: delivered, failed_will_retry, gave_up (72 h of retries, or the receiver answered 410 Gone).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  return (r) => total.inc({ outcome: outcomeLabel[r.outcome] });
}
