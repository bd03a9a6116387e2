/**
 * Upkeep and the webhook outbox: what the maintenance loop runs (expired leases and timed-out
 * attempts; pruning finished jobs, old idempotency keys and the event log past its retention) and
 * what the HTTP layer's webhook dispatcher claims, schedules and records.
 */
import { SluiceError } from "../errors.js";
import type { JobLeasing } from "./job-leasing.js";
import { type JobServiceShared, JobServicePart } from "./job-service-shared.js";
import type { WebhookDelivery } from "../job-store.js";
import { nextWebhookAttemptAtMs, webhookRetry } from "./webhook-schedule.js";

export class JobUpkeep extends JobServicePart {
  constructor(
    shared: JobServiceShared,
    private readonly leasing: Pick<JobLeasing, "retryPolicy" | "afterAttemptEnded">,
    private readonly eventRetentionMs: number,
  ) {
    super(shared);
  }

  /** Running jobs whose lease expired or whose attempt timed out: retried, failed or canceled, each page in one write. */
  async expireLeases(batch = 100): Promise<number> {
    let total = 0;
    for (;;) {
      const nowMs = this.clock.nowMs();
      const due = await this.store.jobListExpired({ nowMs, limit: batch });
      const found = await Promise.all(
        due.map(async ({ id, queueName, account }) => {
          const policy = await this.jobQueues.policyByName(account ?? "", queueName).catch((err: unknown) => {
            if (err instanceof SluiceError && err.code === "QueueNotFound") return undefined;
            throw err;
          });
          return policy && { policy, action: { kind: "expire" as const, ...this.leasing.retryPolicy(policy), id } };
        }),
      );
      const expiring = found.filter((f) => f !== undefined);
      const results = expiring.length === 0 ? [] : await this.store.jobTransitionMany({ nowMs, actions: expiring.map((e) => e.action) });
      results.forEach((r, i) => {
        // Refused (gone meanwhile), or not past its time any more (no events): nothing to tell.
        if (!r.ok || r.change.events.length === 0) return;
        this.shared.publish(r.change);
        this.leasing.afterAttemptEnded(expiring[i]!.policy, r.change);
      });
      total += due.length;
      if (due.length < batch || this.shared.isClosed()) return total;
    }
  }

  /** Deletes finished jobs past their queue's resultTtlSeconds, and expired idempotency keys. */
  async prune(batch = 1_000): Promise<number> {
    let total = 0;
    for (;;) {
      const { jobs, idempotencyKeys } = await this.store.jobPrune({ nowMs: this.clock.nowMs(), limit: batch });
      total += jobs;
      if ((jobs < batch && idempotencyKeys < batch) || this.shared.isClosed()) break;
    }
    await this.pruneEvents();
    return total;
  }

  /** Deletes events older than the log's retention; answers how many. */
  async pruneEvents(batch = 10_000): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.store.jobEventPrune({ beforeAtMs: this.clock.nowMs() - this.eventRetentionMs, limit: batch });
      total += n;
      if (n < batch || this.shared.isClosed()) return total;
    }
  }

  // ---- the webhook outbox (delivered by the HTTP layer's dispatcher) ----

  async claimWebhookDeliveries(limit: number): Promise<WebhookDelivery[]> {
    return this.store.webhookDeliveryClaim({ nowMs: this.clock.nowMs(), limit, claimMs: webhookRetry.claimMs });
  }

  async nextWebhookDueAtMs(): Promise<number | undefined> {
    return this.store.webhookDeliveryNextDueAt();
  }

  /**
   * Records an attempt; a failed one is retried on core's schedule (no sooner than the receiver's
   * `retryAfterMs`), or given up after 72 h — or at once when `final` (410 Gone). Returns which.
   */
  async recordWebhookAttempt(
    d: WebhookDelivery,
    outcome: { delivered: boolean; statusCode?: number; error?: string; retryAfterMs?: number; final?: boolean },
  ): Promise<"delivered" | "retrying" | "gaveUp"> {
    const nowMs = this.clock.nowMs();
    const { retryAfterMs, final, ...attempt } = outcome;
    const nextAttemptAtMs =
      outcome.delivered || final ? undefined : nextWebhookAttemptAtMs({ attempts: d.attempts + 1, createdAtMs: d.createdAtMs, nowMs, random: this.random(), retryAfterMs });
    await this.store.webhookDeliveryRecord({ id: d.id, nowMs, ...attempt, nextAttemptAtMs });
    if (outcome.delivered) return "delivered";
    return nextAttemptAtMs === undefined ? "gaveUp" : "retrying";
  }
}
