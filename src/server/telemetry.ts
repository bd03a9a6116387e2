/**
 * Wires what the server reports: logs (logger.ts), Prometheus metrics (metrics/) and the
 * autoscaling advisor's workload tracker, as the observers core and the protocols call. The
 * composition root makes one and hands its parts to the services it builds.
 */
import { type AccountQuotas, type Clock, type JobQueueInfo, type JobService, type QueueObserver, type QueueRecord, type QueueService, type WorkersAdvice, WorkloadTracker, adviseWorkers } from "../core/index.js";
import type { RequestObserver } from "../protocols/http/request-outcome.js";
import type { WebhookAttemptReport } from "../protocols/jobs/index.js";
import { everyAccountsQueues } from "./all-queues.js";
import { moveTaskLog, webhookAttemptLog } from "./event-log.js";
import { jobEventFacts } from "./job-event-facts.js";
import type { Logger } from "./logger.js";
import { lagSampleHandler, startLagSampler } from "./metrics/event-loop-lag.js";
import { createServerMetrics } from "./metrics/server-metrics.js";
import type { QuotaTelemetry } from "./metrics/quota-metrics.js";
import type { StoreTelemetry } from "./metrics/store-metrics.js";
import { requestLog } from "./request-log.js";

export interface Telemetry {
  queueObserver: QueueObserver;
  onRequestDone: RequestObserver;
  onWebhookAttempt: (report: WebhookAttemptReport) => void;
  workersAdvice: (info: JobQueueInfo) => WorkersAdvice;
  /** GET /metrics: everything, or one account's series (ServerMetrics.render). */
  metrics: { render(accountId?: string): Promise<{ contentType: string; body: string }> };
  /** For the SQLite store: its commits and WAL syncs. */
  store: StoreTelemetry;
  /** Requests refused for an account's quota. */
  quotas: QuotaTelemetry;
  /** Starts following the jobs' lifecycle events; returns the function that stops it. */
  followJobs(jobs: JobService): () => void;
  /** Starts timing the event loop (sluice_event_loop_lag_seconds, a warning per stall); returns its stop. */
  watchEventLoop(): () => void;
}

/** The dead-letter queue a queue's redrive policy names. */
function deadLetterQueueOf(queue: QueueRecord): string | undefined {
  return queue.config.redrivePolicy?.deadLetterQueueName;
}

/** The autoscaling advisor's key for a queue: a name is a queue in each account. */
function workloadKey(queue: { account: string; name: string }): string {
  return queue.account === "" ? queue.name : `${queue.account}/${queue.name}`;
}

export function createTelemetry(p: {
  logger: Logger;
  clock: Clock;
  version: string;
  /** The server's own account id (--account-id): its queues' `account` label. */
  accountId: string;
  metricsQueueLimit: number;
  /** Late-bound: the services are built with this telemetry's observers. */
  services: () => { queues: QueueService; jobs: JobService };
  /** Whether the store's disk is full now: its 503s are logged once (store-writability.ts), not per request. */
  storeFull?: () => boolean;
  /** Every account with a quota (late-bound like the services). */
  quotaLimits?: () => Iterable<[string, AccountQuotas]>;
}): Telemetry {
  const workload = new WorkloadTracker(p.clock);
  const metrics = createServerMetrics({
    version: p.version,
    accountId: p.accountId,
    queueLabelLimit: p.metricsQueueLimit,
    ...(p.quotaLimits === undefined ? {} : { quotaLimits: p.quotaLimits }),
    sources: {
      queues: () => {
        workload.sweep();
        return everyAccountsQueues(p.services().queues);
      },
      depthOf: (queue) => p.services().queues.queueDepth(queue),
      deadLetterQueueOf,
      async workersDesired(queue, visible) {
        const { settings } = await p.services().jobs.jobQueues.policyOf(queue);
        return adviseWorkers({ ...workload.rates(workloadKey(queue)), backlog: visible, drainTargetSeconds: settings.drainTargetSeconds, workerConcurrency: settings.workerConcurrency }).workersDesired;
      },
      async workersSeen(account) {
        const workers = await p.services().jobs.forAccount(account).listWorkers();
        const byQueue = new Map<string, number>();
        for (const w of workers) for (const q of w.queues) byQueue.set(q, (byQueue.get(q) ?? 0) + 1);
        return byQueue;
      },
      nowMs: () => p.clock.nowMs(),
    },
  });
  const requestLine = requestLog(p.logger, p.storeFull);
  const webhookLine = webhookAttemptLog(p.logger, p.accountId);
  const traffic = metrics.queueTraffic;
  return {
    queueObserver: {
      ...traffic,
      ...moveTaskLog(p.logger),
      messagesSent(queue, count) {
        traffic.messagesSent(queue, count);
        workload.arrived(workloadKey(queue), count);
      },
    },
    onRequestDone(outcome) {
      requestLine(outcome);
      metrics.onRequestDone(outcome);
    },
    onWebhookAttempt(report) {
      webhookLine(report);
      metrics.onWebhookAttempt(report);
    },
    workersAdvice: (info) =>
      adviseWorkers({
        ...workload.rates(workloadKey(info)),
        backlog: info.stats.messages.visible,
        drainTargetSeconds: info.settings.drainTargetSeconds,
        workerConcurrency: info.settings.workerConcurrency,
      }),
    metrics,
    store: metrics.store,
    quotas: metrics.quotas,
    followJobs(jobs) {
      return jobs.events.subscribe({}, (event) => {
        const facts = jobEventFacts(event);
        metrics.onJobEvent(facts);
        const key = workloadKey({ account: facts.account, name: facts.queue });
        if (facts.arrival) workload.arrived(key);
        if (facts.runSeconds !== undefined) workload.served(key, facts.runSeconds);
      });
    },
    watchEventLoop() {
      const warn = (stalledMs: number): void => p.logger.warn({ stalledMs: Math.round(stalledMs) }, `event loop stalled for ${Math.round(stalledMs)} ms: no request was answered meanwhile`);
      return startLagSampler(lagSampleHandler({ observe: metrics.eventLoopLag, warn }));
    },
  };
}
