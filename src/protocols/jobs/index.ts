/**
 * The jobs protocol: its HTTP routes, and the background work it needs running beside them —
 * core's job upkeep (expired leases, timeouts, pruning) and the webhook dispatcher.
 */
import { type BatchRunner, type BatchService, type Clock, type JobMaintenance, startBatchRunner, startJobMaintenance, type JobService, type ScheduleService, type Scheduler, startScheduler } from "../../core/index.js";
import { type WebhookAttemptReport, WebhookDispatcher } from "./webhooks/dispatcher.js";
import type { WebhookUrlPolicy } from "./webhooks/url-policy.js";

export { type JobsRoutesOptions, jobsRoutes } from "./routes.js";
export { loadWebhookSecret } from "./webhooks/secret.js";
export { errorAnswerOf } from "./http-errors.js";
export type { WebhookUrlPolicy } from "./webhooks/url-policy.js";
export type { WebhookAttemptReport } from "./webhooks/dispatcher.js";

export interface JobsBackground {
  maintenance: JobMaintenance;
  /** Fires due schedules (scheduler.ts). */
  scheduler: Scheduler;
  /** Moves batches along (batch-runner.ts). */
  batchRunner?: BatchRunner;
  webhooks: WebhookDispatcher;
  stop(): Promise<void>;
}

export function startJobsBackground(p: {
  jobs: JobService;
  schedules: ScheduleService;
  batches?: BatchService;
  clock: Clock;
  webhookSecret: string;
  /** An account's own webhook secret, when it has one (WebhookDispatcherDeps.accountSecret). */
  accountWebhookSecret?: (account: string) => string | undefined;
  webhookPolicy: WebhookUrlPolicy;
  onError: (err: unknown) => void;
  onWebhookAttempt?: (report: WebhookAttemptReport) => void;
}): JobsBackground {
  const maintenance = startJobMaintenance({ jobs: p.jobs, clock: p.clock, onError: p.onError });
  const scheduler = startScheduler({ schedules: p.schedules, clock: p.clock, onError: p.onError });
  const batchRunner = p.batches ? startBatchRunner({ batches: p.batches, clock: p.clock, onError: p.onError }) : undefined;
  const webhooks = new WebhookDispatcher({ jobs: p.jobs, clock: p.clock, secret: p.webhookSecret, accountSecret: p.accountWebhookSecret, policy: p.webhookPolicy, onError: p.onError, onAttempt: p.onWebhookAttempt });
  webhooks.start();
  return {
    maintenance,
    scheduler,
    batchRunner,
    webhooks,
    async stop() {
      await Promise.all([maintenance.stop(), scheduler.stop(), batchRunner?.stop(), webhooks.stop()]);
    },
  };
}
