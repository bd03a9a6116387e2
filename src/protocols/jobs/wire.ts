/**
 * The jobs API's JSON: jobs, queues, events and webhook payloads. Inputs, outputs and metadata are
 * JSON text in core and are spliced in as they are — a 1 MiB input is never parsed to be re-sent.
 */
import { type JobQueueInfo, type WebhookDelivery, type JobEvent, type JobRecord, type QueueConfig, type WorkersAdvice } from "../../core/index.js";
import { isoTime } from "./iso-time.js";

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : isoTime(ms);
}

export function deliveryWire(d: WebhookDelivery): Record<string, unknown> {
  return {
    id: d.id,
    event: d.event,
    url: d.url,
    status: d.status,
    attempts: d.attempts,
    createdAt: iso(d.createdAtMs),
    lastAttemptAt: iso(d.lastAttemptAtMs),
    lastStatusCode: d.lastStatusCode ?? null,
    lastError: d.lastError ?? null,
    nextAttemptAt: d.status === "pending" ? iso(d.nextAttemptAtMs) : null,
    deliveredAt: iso(d.deliveredAtMs),
  };
}

/**
 * A job as JSON text; `lease` adds the lease id (lease answers only), `deliveries` the webhook
 * attempts, `parents` a leased child's parents as they finished (their outputs spliced in as text).
 */
export function jobJson(job: JobRecord, extra: { lease?: boolean; deliveries?: WebhookDelivery[]; parents?: JobRecord[] } = {}): string {
  const fields: Record<string, unknown> = {
    id: job.id,
    queue: job.queueName,
    status: job.status,
    error: job.error ?? null,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    priority: job.priority,
    progress: job.progress ?? null,
    createdAt: iso(job.createdAtMs),
    startedAt: iso(job.startedAtMs),
    finishedAt: iso(job.finishedAtMs),
    updatedAt: iso(job.updatedAtMs),
    idempotencyKey: job.idempotencyKey ?? null,
    cancelRequested: job.cancelRequested,
    timeoutSeconds: job.timeoutSeconds ?? null,
    availableAt: job.status === "queued" ? iso(job.availableAtMs) : null,
    leaseExpiresAt: job.status === "running" ? iso(job.leaseExpiresAtMs) : null,
    webhook: job.webhook ?? null,
    tenant: job.tenant ?? null,
    dependsOn: job.dependsOn ?? null,
    onParentFailure: job.onParentFailure ?? null,
  };
  if (extra.lease) fields.leaseId = job.leaseToken;
  if (extra.deliveries) fields.webhookDeliveries = extra.deliveries.map(deliveryWire);
  const head = JSON.stringify(fields);
  const parents = extra.parents ? `,"parents":[${extra.parents.map(parentJson).join(",")}]` : "";
  return `${head.slice(0, -1)},"input":${job.inputJson},"output":${job.outputJson ?? "null"},"metadata":${job.metadataJson ?? "null"}${parents}}`;
}

function parentJson(p: JobRecord): string {
  return `{"id":${JSON.stringify(p.id)},"queue":${JSON.stringify(p.queueName)},"status":${JSON.stringify(p.status)},"output":${p.outputJson ?? "null"},"error":${JSON.stringify(p.error ?? null)}}`;
}

export function eventJson(event: JobEvent): string {
  return `{"type":${JSON.stringify(event.type)},"at":${JSON.stringify(iso(event.atMs))},"job":${jobJson(event.job)}}`;
}

/** The Standard Webhooks payload shape: {type, timestamp, data}. */
export function webhookPayloadJson(d: WebhookDelivery): string {
  return `{"type":${JSON.stringify(d.event)},"timestamp":${JSON.stringify(iso(d.createdAtMs))},"data":${jobJson(d.job)}}`;
}

/** `advice`: the autoscaling advisor's numbers for the queue, when the server runs one. */
export function queueWire(info: JobQueueInfo, advice?: WorkersAdvice): Record<string, unknown> {
  const s = info.settings;
  return {
    name: info.name,
    deadLetterQueue: info.deadLetterQueue ?? null,
    attributes: attributesWire(info.config),
    settings: {
      maxAttempts: s.maxAttempts,
      backoff: s.backoff,
      leaseSeconds: s.leaseSeconds,
      timeoutSeconds: s.timeoutSeconds ?? null,
      resultTtlSeconds: s.resultTtlSeconds,
      drainTargetSeconds: s.drainTargetSeconds,
      workerConcurrency: s.workerConcurrency,
      rateLimitPerSecond: s.rateLimitPerSecond ?? null,
      maxRunning: s.maxRunning ?? null,
      maxRunningPerTenant: s.maxRunningPerTenant ?? null,
    },
    stats: {
      jobs: info.stats.jobs,
      messages: info.stats.messages,
      deadLetterMessages: info.stats.deadLetterMessages ?? null,
      oldestVisibleAgeSeconds: info.stats.oldestVisibleAgeSeconds ?? null,
      throughput: info.stats.throughput,
    },
    ...(advice
      ? { autoscaling: { workersDesired: advice.workersDesired, arrivalsPerSecond: advice.arrivalsPerSecond, meanServiceSeconds: advice.meanServiceSeconds ?? null } }
      : {}),
    createdAt: iso(info.createdAtMs),
  };
}

/** A queue's SQS attributes, in this API's names (units last); PUT /v1/queues/{queue}/attributes takes the same. */
export function attributesWire(config: QueueConfig): Record<string, unknown> {
  const policy = config.redrivePolicy;
  return {
    fifo: config.fifoQueue,
    visibilityTimeoutSeconds: config.visibilityTimeoutSeconds,
    delaySeconds: config.delaySeconds,
    messageRetentionPeriodSeconds: config.messageRetentionPeriodSeconds,
    maximumMessageSizeBytes: config.maximumMessageSizeBytes,
    receiveMessageWaitTimeSeconds: config.receiveMessageWaitTimeSeconds,
    redrivePolicy: policy ? { deadLetterQueue: policy.deadLetterQueueName, maxReceiveCount: policy.maxReceiveCount } : null,
    contentBasedDeduplication: config.contentBasedDeduplication,
    defaultPriority: config.defaultPriority,
  };
}
