/**
 * The jobs API's JSON: jobs, queues, events and webhook payloads. Inputs, outputs and metadata are
 * JSON text in core and are spliced in as they are — a 1 MiB input is never parsed to be re-sent.
 */
import { type AttachmentInfo, parseAttachments, type JobQueueInfo, type WebhookDelivery, type JobEvent, type JobRecord, type QueueConfig, type WorkersAdvice } from "../../core/index.js";
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
 * Written field by field, in the documented order: every job answer and event line is one, and an
 * object of 20-odd fields built only to be stringified cost twice as much.
 */
export function jobJson(job: JobRecord, extra: { lease?: boolean; deliveries?: WebhookDelivery[]; parents?: JobRecord[]; downloadUrls?: ReadonlyMap<string, string> } = {}): string {
  let json =
    `{"id":${JSON.stringify(job.id)},"queue":${JSON.stringify(job.queueName)},"status":${JSON.stringify(job.status)}` +
    `,"error":${job.error === undefined ? "null" : JSON.stringify(job.error)}` +
    `,"attempt":${JSON.stringify(job.attempt)},"maxAttempts":${JSON.stringify(job.maxAttempts)},"priority":${JSON.stringify(job.priority)}` +
    `,"progress":${job.progress === undefined ? "null" : JSON.stringify(job.progress)}` +
    `,"createdAt":${isoJson(job.createdAtMs)},"startedAt":${isoJson(job.startedAtMs)},"finishedAt":${isoJson(job.finishedAtMs)},"updatedAt":${isoJson(job.updatedAtMs)}` +
    `,"idempotencyKey":${orNull(job.idempotencyKey)},"cancelRequested":${JSON.stringify(job.cancelRequested)}` +
    `,"timeoutSeconds":${job.timeoutSeconds === undefined ? "null" : JSON.stringify(job.timeoutSeconds)}` +
    `,"availableAt":${job.status === "queued" ? isoJson(job.availableAtMs) : "null"}` +
    `,"leaseExpiresAt":${job.status === "running" ? isoJson(job.leaseExpiresAtMs) : "null"}` +
    `,"webhook":${job.webhook === undefined ? "null" : JSON.stringify(job.webhook)},"tenant":${orNull(job.tenant)}` +
    `,"requires":${job.requires === undefined ? "null" : JSON.stringify(job.requires)}` +
    `,"dependsOn":${job.dependsOn === undefined ? "null" : JSON.stringify(job.dependsOn)},"onParentFailure":${orNull(job.onParentFailure)}`;
  // As JSON.stringify of an object would: a field whose value is undefined is left out.
  if (extra.lease && job.leaseToken !== undefined) json += `,"leaseId":${JSON.stringify(job.leaseToken)}`;
  if (extra.lease && job.trace !== undefined) json += `,"trace":${JSON.stringify(job.trace)}`;
  if (extra.deliveries) json += `,"webhookDeliveries":${JSON.stringify(extra.deliveries.map(deliveryWire))}`;
  // Only a job with attachments has these fields (none on the hot path's jobs).
  if (job.attachmentsJson !== undefined) json += `,"attachments":${attachmentsWire(job.attachmentsJson, extra.downloadUrls)}`;
  if (job.outputAttachmentsJson !== undefined) json += `,"outputAttachments":${attachmentsWire(job.outputAttachmentsJson, extra.downloadUrls)}`;
  const parents = extra.parents ? `,"parents":[${extra.parents.map(parentJson).join(",")}]` : "";
  return `${json},"input":${job.inputJson},"output":${job.outputJson ?? "null"},"metadata":${job.metadataJson ?? "null"}${parents}}`;
}

/** A job's attachments as stored, each with its download URL when the answer carries them. */
function attachmentsWire(json: string, urls: ReadonlyMap<string, string> | undefined): string {
  if (urls === undefined) return json;
  const out: Record<string, AttachmentInfo & { downloadUrl?: string }> = parseAttachments(json);
  for (const a of Object.values(out)) a.downloadUrl = urls.get(a.blobId);
  return JSON.stringify(out);
}

/** A timestamp as a JSON string (ISO text never needs escaping), or null. */
function isoJson(ms: number | undefined): string {
  return ms === undefined ? "null" : `"${isoTime(ms)}"`;
}

function orNull(s: string | undefined): string {
  return s === undefined ? "null" : JSON.stringify(s);
}

function parentJson(p: JobRecord): string {
  return `{"id":${JSON.stringify(p.id)},"queue":${JSON.stringify(p.queueName)},"status":${JSON.stringify(p.status)},"output":${p.outputJson ?? "null"},"error":${JSON.stringify(p.error ?? null)}}`;
}

export function eventJson(event: JobEvent): string {
  const o = event.output;
  if (o) return `{"type":"job.output","at":${JSON.stringify(iso(event.atMs))},"jobId":${JSON.stringify(event.job.id)},"attempt":${o.attempt},"index":${o.index},"chunks":${o.chunksJson}}`;
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
    paused: info.config.paused === true,
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
      rateLimitPerTenantPerSecond: s.rateLimitPerTenantPerSecond ?? null,
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
