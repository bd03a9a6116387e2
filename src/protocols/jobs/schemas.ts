/**
 * The jobs API's JSON Schemas: the one source for request validation (fastify/Ajv) and for
 * /openapi.json (OpenAPI 3.1, whose schema dialect is JSON Schema 2020-12 — only keywords that
 * mean the same in Ajv's draft-07 are used here). Bounds come from core's limits table.
 */
import { jobStatuses, webhookEventTypes, jobEventTypes, limits, onParentFailureModes } from "../../core/index.js";

export type JsonSchema = Record<string, unknown>;

const j = limits.jobs;
export const int = (minimum: number, maximum: number, description?: string): JsonSchema => ({ type: "integer", minimum, maximum, ...(description ? { description } : {}) });
export const object = (properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}): JsonSchema => ({
  type: "object",
  properties,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
  ...extra,
});
export const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, "null"] });
export const dateTime: JsonSchema = { type: "string", format: "date-time" };
export const anyJson: JsonSchema = { description: "Any JSON value." };

// ---- path parameters ----

export const queueName: JsonSchema = { type: "string", minLength: 1, maxLength: limits.queueNameMaxLength, pattern: "^[A-Za-z0-9_-]+$", description: "Queue name (standard queues only)." };
export const queueParams = object({ queue: queueName }, ["queue"]);
export const jobParams = object({ id: { type: "string", minLength: 1, maxLength: 128, description: "Job id." } }, ["id"]);

// ---- request bodies ----

export const jobErrorBody = object(
  { message: { type: "string", maxLength: j.errorMessageMaxLength }, type: { type: "string", maxLength: j.errorTypeMaxLength } },
  ["message"],
);

export const webhookBody = object(
  {
    url: { type: "string", minLength: 1, maxLength: j.webhookUrlMaxLength, description: "http(s) URL; non-public addresses are refused unless the server allows them." },
    events: { type: "array", items: { type: "string", enum: [...webhookEventTypes] }, minItems: 1, uniqueItems: true, description: "Default: job.succeeded, job.failed, job.canceled." },
  },
  ["url"],
);

/** A worker's labels or a job's requires: string keys and values (core checks each key's alphabet and each length). */
const labelSet = (description: string): JsonSchema => ({
  type: "object",
  maxProperties: j.labelPairsMax,
  additionalProperties: { type: "string", maxLength: j.labelValueMaxLength },
  propertyNames: { minLength: 1, maxLength: j.labelKeyMaxLength },
  description,
});

export const blobId: JsonSchema = { type: "string", pattern: "^blob_[0-9a-f]{32}$", description: "A blob id: blob_ and 32 hex digits." };

/** One attachment as a job shows it. */
export const attachmentSchema = object(
  {
    blobId,
    size: { type: "integer" },
    contentType: { type: "string" },
    sha256: { type: "string" },
    downloadUrl: { type: "string", description: "In a lease (valid at least while the lease is) and in GET /v1/jobs/{id}; absent elsewhere." },
  },
  ["blobId", "size", "contentType", "sha256"],
);

export const attachmentsSchema: JsonSchema = { type: "object", additionalProperties: attachmentSchema, description: "By name (1–64 of [A-Za-z0-9._-]); absent when the job has none." };

/** What a submit or complete names: its attachments by name, each a blob id (core checks every one). */
export const attachmentRefs = (what: string): JsonSchema => ({
  type: "object",
  description: `${what}: name (1–64 of [A-Za-z0-9._-]) → blob id from POST /v1/blobs, uploaded, of this account; at most ${limits.blobs.attachmentsMax}.`,
});

export const submitBody = object(
  {
    input: { ...anyJson, description: "The job's input: any JSON value, at most 1 MiB serialized." },
    priority: int(limits.priorityMin, limits.priorityMax, "Higher is leased first; FIFO within a priority. Default 0."),
    delaySeconds: int(0, j.delayMaxSeconds, "Not leasable before this many seconds."),
    runAt: {
      type: "string",
      maxLength: 40,
      description: `Not leasable before this RFC 3339 time (instead of delaySeconds; both is a 400). A past time runs now; at most ${j.runAtMaxDays} days ahead and within the queue's message retention.`,
    },
    timeoutSeconds: int(1, j.timeoutMaxSeconds, "Per attempt. Default: the queue's."),
    maxAttempts: int(1, j.maxAttemptsMax, "Default: the queue's (3)."),
    webhook: webhookBody,
    metadata: { type: "object", description: `Any JSON object, at most ${j.metadataMaxBytes} bytes serialized.` },
    tenant: {
      type: "string",
      minLength: 1,
      maxLength: j.tenantMaxLength,
      description: "Who the job is for (a customer, an API key): the queue is shared fairly between tenants, and maxRunningPerTenant caps each. Letters, digits and punctuation.",
    },
    dependsOn: {
      type: "array",
      minItems: 1,
      maxItems: j.dependsOnMax,
      uniqueItems: true,
      items: { type: "string", minLength: 1, maxLength: 128 },
      description: "Ids of jobs that must succeed first: the job is `waiting` until they have, then queued; its worker sees their outputs (`parents` in the lease). Unknown ids are refused.",
    },
    onParentFailure: { type: "string", enum: [...onParentFailureModes], description: "With dependsOn: a failed (canceled) parent fails (cancels) this job (`fail`, the default), or is waited out like any other (`ignore`)." },
    requires: labelSet(
      `Labels a worker must carry to lease this job (every pair), e.g. {"gpu":"a100"}: at most ${j.labelPairsMax} pairs; keys 1–${j.labelKeyMaxLength} of letters, digits, _ . - / (starting with a letter or digit), values at most ${j.labelValueMaxLength} characters. Not with tenant.`,
    ),
    attachments: attachmentRefs("Input attachments"),
  },
  ["input"],
);


/** One entry of a batch submit: a submit's body, plus the Idempotency-Key a lone submit sends as a header. */
export const submitBatchEntry = object(
  {
    ...(submitBody.properties as Record<string, JsonSchema>),
    dependsOn: {
      type: "array",
      minItems: 1,
      maxItems: j.dependsOnMax,
      items: { oneOf: [{ type: "string", minLength: 1, maxLength: 128 }, object({ entry: int(0, j.submitBatchMaxJobs - 1, "Index of another entry of this batch.") }, ["entry"])] },
      description: "Job ids, or `{\"entry\": i}` for another entry of this batch (a small DAG: entries are submitted parents first; a cycle refuses the batch).",
    },
    idempotencyKey: { type: "string", minLength: 1, maxLength: j.idempotencyKeyMaxLength, pattern: "^\\S(.*\\S)?$", description: "This entry's idempotency key, read as a lone submit's Idempotency-Key header is: 1–255 printable ASCII characters, or a structured-field string of them (`\"k\"` is the key k)." },
  },
  ["input"],
);

export const submitBatchBody = object(
  { jobs: { type: "array", minItems: 1, maxItems: j.submitBatchMaxJobs, items: submitBatchEntry, description: `1–${j.submitBatchMaxJobs} jobs, each submitted as a lone submit would be.` } },
  ["jobs"],
);

const leaseId: JsonSchema = { type: "string", minLength: 1, maxLength: 128 };

export const heartbeatBody = object(
  {
    leaseId,
    leaseSeconds: int(1, limits.visibilityTimeoutMaxSeconds, "Default: the length the job was leased with."),
    progress: { type: "number", minimum: 0, maximum: 1 },
  },
  ["leaseId"],
);

export const outputBody = object(
  {
    leaseId,
    chunks: { type: "array", minItems: 1, maxItems: 1000, items: anyJson, description: "1–1000 chunks, each any JSON value; at most 1 MiB of JSON in all." },
  },
  ["leaseId", "chunks"],
);

export const outputChunksQuery: JsonSchema = {
  type: "object",
  properties: { from: int(0, Number.MAX_SAFE_INTEGER, "The index of the first chunk wanted (default 0).") },
};

export const completeBody = object({ leaseId, output: { ...anyJson, description: "The result: any JSON value (default null)." }, outputAttachments: attachmentRefs("Output attachments") }, ["leaseId"]);

export const releaseBody = object({ leaseId }, ["leaseId"]);

export const failBody = object(
  {
    leaseId,
    error: jobErrorBody,
    retryable: { type: "boolean", description: "Default true." },
    retryAfterSeconds: int(0, j.retryDelayMaxSeconds, "Retry after exactly this long instead of the backoff."),
  },
  ["leaseId", "error"],
);

const jobId: JsonSchema = { type: "string", minLength: 1, maxLength: 128, description: "Job id." };

export const workerSchema = object(
  {
    workerId: { type: "string" },
    queues: { type: "array", items: { type: "string" }, description: "Queues it leased from in the last 60 s." },
    labels: { oneOf: [{ type: "object", additionalProperties: { type: "string" } }, { type: "null" }], description: "Its labels, as its latest lease request gave them." },
    lastSeenAt: dateTime,
    running: { type: "integer", minimum: 0, description: "Jobs leased to it that are still running." },
  },
  ["workerId", "queues", "labels", "lastSeenAt", "running"],
);

export const leaseBody = object({
  max: int(0, j.leaseMaxJobs, "Jobs to lease at most. Default 1. 0 (with acks only): just report the acks."),
  waitSeconds: int(0, j.leaseWaitMaxSeconds, "Long poll: wait this long for a first job. Default 0. Counts as 0 when the request carries acks."),
  leaseSeconds: int(1, limits.visibilityTimeoutMaxSeconds, "Default: the queue's (30)."),
  batchWindowMs: int(0, j.batchWindowMaxMs, "After the first job, keep gathering up to max for this long. Default 0. Counts as 0 when the request carries acks."),
  labels: labelSet(`The worker's labels, e.g. {"gpu":"a100","region":"eu"}: besides jobs without requires, it leases the jobs whose requires these contain. Rules as a job's requires.`),
  workerId: { type: "string", minLength: 1, maxLength: j.workerIdMaxLength, description: "Names this worker in GET /v1/workers (the SDKs send one per process)." },
  complete: {
    type: "array",
    maxItems: j.leaseMaxAcks,
    description: "Finished jobs to complete first, as POST /v1/jobs/{id}/complete would, in the same write as the lease.",
    items: object({ id: jobId, leaseId, output: { ...anyJson, description: "The result (default null)." } }, ["id", "leaseId"]),
  },
  fail: {
    type: "array",
    maxItems: j.leaseMaxAcks,
    description: "Failed attempts to report first, as POST /v1/jobs/{id}/fail would.",
    items: object(
      {
        id: jobId,
        leaseId,
        error: jobErrorBody,
        retryable: { type: "boolean", description: "Default true." },
        retryAfterSeconds: int(0, j.retryDelayMaxSeconds),
      },
      ["id", "leaseId", "error"],
    ),
  },
});

export const settingsBody = object({
  maxAttempts: int(1, j.maxAttemptsMax),
  backoff: object({ baseSeconds: int(0, j.backoffBaseMaxSeconds), capSeconds: int(0, j.retryDelayMaxSeconds) }),
  leaseSeconds: int(1, limits.visibilityTimeoutMaxSeconds),
  timeoutSeconds: nullable(int(1, j.timeoutMaxSeconds, "null clears it.")),
  resultTtlSeconds: int(j.resultTtlMinSeconds, j.resultTtlMaxSeconds),
  drainTargetSeconds: int(1, j.drainTargetMaxSeconds, "The autoscaling advisor empties the backlog within this many seconds."),
  workerConcurrency: int(1, j.workerConcurrencyMax, "Jobs one worker runs at once, for the advisor's worker count."),
  rateLimitPerSecond: nullable(int(1, j.rateLimitPerSecondMax, "At most this many jobs started per second, by every worker together (a token bucket holding one second's worth). null clears it.")),
  maxRunning: nullable(int(1, j.maxRunningMax, "At most this many jobs running at once. null clears it.")),
  maxRunningPerTenant: nullable(int(1, j.maxRunningMax, "At most this many jobs of one tenant running at once. null clears it.")),
  rateLimitPerTenantPerSecond: nullable(int(1, j.rateLimitPerSecondMax, "At most this many jobs of one tenant started per second (a token bucket per tenant holding one second's worth); jobs without a tenant are not held by it. null clears it.")),
  paused: { type: "boolean", description: "true pauses the queue: leases and SQS receives return nothing (long polls wait and are answered on resume) while submits and sends go on, on every node. false resumes it." },
});

// ---- query strings and headers (extra parameters are ignored: caches and proxies add them) ----

export const getJobQuery: JsonSchema = { type: "object", properties: { wait: int(0, j.getWaitMaxSeconds, "Hold until the job is terminal or this many seconds pass.") } };
export const submitJobQuery: JsonSchema = {
  type: "object",
  properties: { wait: int(0, j.getWaitMaxSeconds, "After submitting, hold the answer until the job is terminal or this many seconds pass (0: answer at once).") },
};
export const listJobsQuery: JsonSchema = {
  type: "object",
  properties: {
    status: { type: "string", enum: [...jobStatuses] },
    limit: int(1, j.listMaxJobs, `Default ${j.listDefaultJobs}.`),
    cursor: { type: "string", maxLength: 64, description: "nextCursor of the previous page." },
  },
};
const eventId: JsonSchema = { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER };
export const eventsQuery: JsonSchema = {
  type: "object",
  properties: {
    queue: queueName,
    since: { ...eventId, description: "Resume after this event id (an `id:` an earlier stream sent): its later events, each once. Default: from now on. A Last-Event-ID header wins over it." },
  },
};
export const jobEventsQuery: JsonSchema = { type: "object", properties: { since: (eventsQuery.properties as Record<string, JsonSchema>).since! } };
/** An SSE client's reconnect sends the last `id:` it saw. */
export const eventStreamHeaders: JsonSchema = {
  type: "object",
  properties: { "last-event-id": { type: "string", pattern: "^\\s*[0-9]{1,15}\\s*$", description: "Resume after this event id (what EventSource sends when it reconnects)." } },
};
export const submitHeaders: JsonSchema = {
  type: "object",
  properties: { "idempotency-key": { type: "string", minLength: 1, maxLength: j.idempotencyKeyMaxLength + 2, description: "IETF draft-ietf-httpapi-idempotency-key-header; bare or quoted." } },
};

// ---- responses (documentation only: responses are serialized by wire.ts) ----

export const jobErrorSchema = object({ message: { type: "string" }, type: { type: "string" } }, ["message"]);

export const webhookDeliverySchema = object({
  id: { type: "string" },
  event: { type: "string", enum: [...webhookEventTypes] },
  url: { type: "string" },
  status: { type: "string", enum: ["pending", "delivered", "failed"] },
  attempts: { type: "integer" },
  createdAt: dateTime,
  lastAttemptAt: nullable(dateTime),
  lastStatusCode: nullable({ type: "integer" }),
  lastError: nullable({ type: "string" }),
  nextAttemptAt: nullable(dateTime),
  deliveredAt: nullable(dateTime),
});

const jobProperties: Record<string, JsonSchema> = {
    id: { type: "string" },
    queue: { type: "string" },
    status: { type: "string", enum: [...jobStatuses] },
    input: anyJson,
    output: anyJson,
    error: { oneOf: [jobErrorSchema, { type: "null" }] },
    attempt: { type: "integer" },
    maxAttempts: { type: "integer" },
    priority: { type: "integer" },
    progress: nullable({ type: "number" }),
    createdAt: dateTime,
    startedAt: nullable(dateTime),
    finishedAt: nullable(dateTime),
    updatedAt: dateTime,
    idempotencyKey: nullable({ type: "string" }),
    metadata: { oneOf: [{ type: "object" }, { type: "null" }] },
    cancelRequested: { type: "boolean" },
    timeoutSeconds: nullable({ type: "integer" }),
    availableAt: nullable(dateTime),
    leaseExpiresAt: nullable(dateTime),
    webhook: { oneOf: [object({ url: { type: "string" }, events: { type: "array", items: { type: "string" } } }), { type: "null" }] },
    tenant: nullable({ type: "string" }),
    requires: { oneOf: [{ type: "object", additionalProperties: { type: "string" } }, { type: "null" }] },
    dependsOn: { oneOf: [{ type: "array", items: { type: "string" } }, { type: "null" }] },
    onParentFailure: { oneOf: [{ type: "string", enum: [...onParentFailureModes] }, { type: "null" }] },
    webhookDeliveries: { type: "array", items: webhookDeliverySchema, description: "GET /v1/jobs/{id} only." },
    attachments: attachmentsSchema,
    outputAttachments: attachmentsSchema,
};
const jobRequired = ["id", "queue", "status", "input", "output", "error", "attempt", "maxAttempts", "priority", "createdAt"];

export const jobSchema = object(jobProperties, jobRequired);

/** A job as a lease answers it: the Job's fields and the lease id (not `allOf` Job: Job admits no other field). */
const parentSchema = object(
  { id: { type: "string" }, queue: { type: "string" }, status: { type: "string", enum: [...jobStatuses] }, output: anyJson, error: { oneOf: [jobErrorSchema, { type: "null" }] } },
  ["id", "queue", "status", "output", "error"],
);

export const leasedJobSchema = object(
  {
    ...jobProperties,
    leaseId: { type: "string", description: "Pass to heartbeat, complete, fail and release." },
    parents: { type: "array", items: parentSchema, description: "A job with dependsOn: its parents as they finished, in dependsOn order (a parent pruned since is left out)." },
    trace: object(
      { traceparent: { type: "string" }, tracestate: { type: "string" } },
      ["traceparent"],
      { description: "The W3C trace context the job was submitted with (its traceparent / tracestate headers), for the worker's span; absent when it sent none." },
    ),
  },
  [...jobRequired, "leaseId"],
);

const settingsSchema = object({
  maxAttempts: { type: "integer" },
  backoff: object({ baseSeconds: { type: "integer" }, capSeconds: { type: "integer" } }),
  leaseSeconds: { type: "integer" },
  timeoutSeconds: nullable({ type: "integer" }),
  resultTtlSeconds: { type: "integer" },
  drainTargetSeconds: { type: "integer" },
  workerConcurrency: { type: "integer" },
  rateLimitPerSecond: nullable({ type: "integer" }),
  maxRunning: nullable({ type: "integer" }),
  maxRunningPerTenant: nullable({ type: "integer" }),
  rateLimitPerTenantPerSecond: nullable({ type: "integer" }),
});
const counts = (names: readonly string[]): JsonSchema => object(Object.fromEntries(names.map((n) => [n, { type: "integer" }])));

export const queueAttributesSchema = object({
  fifo: { type: "boolean" },
  visibilityTimeoutSeconds: { type: "integer" },
  delaySeconds: { type: "integer" },
  messageRetentionPeriodSeconds: { type: "integer" },
  maximumMessageSizeBytes: { type: "integer" },
  receiveMessageWaitTimeSeconds: { type: "integer" },
  redrivePolicy: { oneOf: [object({ deadLetterQueue: { type: "string" }, maxReceiveCount: { type: "integer" } }), { type: "null" }] },
  contentBasedDeduplication: { type: "boolean" },
  defaultPriority: { type: "integer" },
});

export const throughputSchema = object({
  bucketSeconds: { type: "integer" },
  sent: { type: "array", items: { type: "integer" }, description: "Messages sent (SQS sends, job submits and retries) per bucket, oldest first." },
  completed: { type: "array", items: { type: "integer" }, description: "Messages deleted by consumers, and jobs that succeeded or failed, per bucket." },
});

export const queueSchema = object({
  name: { type: "string" },
  paused: { type: "boolean", description: "Leases and receives return nothing while true (PUT /v1/queues/{queue} with paused)." },
  deadLetterQueue: nullable({ type: "string" }),
  attributes: queueAttributesSchema,
  settings: settingsSchema,
  stats: object({
    jobs: counts(jobStatuses),
    messages: counts(["visible", "inFlight", "delayed"]),
    deadLetterMessages: nullable({ type: "integer" }),
    oldestVisibleAgeSeconds: nullable({ type: "integer" }),
    throughput: throughputSchema,
  }),
  autoscaling: object(
    {
      workersDesired: { type: "integer", description: "Workers needed to keep up with arrivals and empty the backlog within drainTargetSeconds (docs/operations.md)." },
      arrivalsPerSecond: { type: "number", description: "Submits, retries and SQS sends per second over the last minute." },
      meanServiceSeconds: nullable({ type: "number", description: "Mean run time of the attempts that ended in the last minute; null before any did." }),
    },
    ["workersDesired", "arrivalsPerSecond", "meanServiceSeconds"],
  ),
  createdAt: dateTime,
});

export const errorSchema = object({ error: object({ code: { type: "string" }, message: { type: "string" } }, ["code", "message"]) }, ["error"]);

export const eventSchema: JsonSchema = {
  type: "object",
  description: "A job event; a job.output event carries jobId, attempt, index (of its first chunk) and chunks instead of the job.",
  properties: {
    type: { type: "string", enum: ["job.snapshot", ...jobEventTypes] },
    at: dateTime,
    job: { $ref: "#/components/schemas/Job" },
    jobId: { type: "string" },
    attempt: { type: "integer" },
    index: { type: "integer" },
    chunks: { type: "array", items: {} },
  },
  required: ["type", "at"],
};

export const ackResultSchema: JsonSchema = {
  type: "object",
  description: "The answer to one complete / fail entry of a lease request: ok, or the error the complete / fail route would have answered (LeaseMismatch, LeaseExpired, JobAlreadyFinished, JobNotFound).",
  properties: { id: { type: "string" }, ok: { type: "boolean" }, error: { type: "object", properties: { code: { type: "string" }, message: { type: "string" } }, required: ["code", "message"] } },
  required: ["id", "ok"],
};

export const batchSubmitResultSchema: JsonSchema = {
  type: "object",
  description: "One batch entry's outcome: `job` (status 201 or 200) or `error` (the status a lone submit would have answered).",
  properties: {
    index: { type: "integer", description: "The entry's position in the request's jobs array." },
    status: { type: "integer" },
    job: { $ref: "#/components/schemas/Job" },
    error: object({ code: { type: "string" }, message: { type: "string" } }, ["code", "message"]),
  },
  required: ["index", "status"],
};
