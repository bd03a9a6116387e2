/**
 * JSON Schemas of the admin routes (queues listed, peeked, sent to, purged, redriven; jobs
 * retried): the dashboard's and the `sluice` CLI's. As schemas.ts, one source for validation and
 * /openapi.json; bounds come from core's limits table.
 */
import { limits } from "../../core/index.js";
import type { JsonSchema } from "./schemas.js";

const int = (minimum: number, maximum: number, description?: string): JsonSchema => ({ type: "integer", minimum, maximum, ...(description ? { description } : {}) });
const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: "object",
  properties,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
});
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, "null"] });
const dateTime: JsonSchema = { type: "string", format: "date-time" };
const a = limits.admin;

/** Any queue's name, FIFO ones included (the jobs routes take standard queues only). */
export const anyQueueName: JsonSchema = {
  type: "string",
  minLength: 1,
  maxLength: limits.queueNameMaxLength,
  pattern: "^[A-Za-z0-9_-]+(\\.fifo)?$",
  description: "Queue name: 1–80 characters of [A-Za-z0-9_-], FIFO queues ending in .fifo.",
};
export const anyQueueParams = object({ queue: anyQueueName }, ["queue"]);
export const taskParams = object({ taskHandle: { type: "string", minLength: 1, maxLength: 128, description: "A redrive's taskHandle." } }, ["taskHandle"]);

// ---- query strings ----

export const listQueuesQuery: JsonSchema = {
  type: "object",
  properties: {
    prefix: { type: "string", maxLength: limits.queueNameMaxLength, description: "Only queues whose name starts with this." },
    limit: int(1, a.listQueuesMaxPage, `Queues per page. Default ${a.listQueuesDefaultPage}.`),
    cursor: { type: "string", maxLength: 256, description: "nextCursor of the previous page." },
  },
};
export const peekQuery: JsonSchema = { type: "object", properties: { limit: int(1, a.peekMaxMessages, `Default ${a.peekDefaultMessages}.`) } };
const intervalSeconds = int(a.statsIntervalMinSeconds, a.statsIntervalMaxSeconds, `Seconds between events. Default ${a.statsIntervalDefaultSeconds}.`);
export const queuesEventsQuery: JsonSchema = { type: "object", properties: { ...(listQueuesQuery.properties as Record<string, JsonSchema>), intervalSeconds } };
export const queueEventsQuery: JsonSchema = { type: "object", properties: { intervalSeconds } };

// ---- request bodies ----

const messageAttributeValue = object(
  {
    dataType: { type: "string", minLength: 1, maxLength: 256, description: "String, Number or Binary, optionally with a custom suffix (Number.float)." },
    stringValue: { type: "string", description: "For String and Number." },
    binaryValue: { type: "string", description: "For Binary: base64." },
  },
  ["dataType"],
);
const messageAttributes: JsonSchema = {
  type: "object",
  additionalProperties: messageAttributeValue,
  maxProperties: limits.messageAttributesMax,
  description: "Message attributes by name, as SQS's MessageAttributes.",
};

export const sendMessageBody = object(
  {
    body: { type: "string", minLength: 1, description: "The message body (text, at most the queue's MaximumMessageSize with its attributes)." },
    messageAttributes,
    delaySeconds: int(0, limits.delayMaxSeconds, "Standard queues only. Default: the queue's DelaySeconds."),
    priority: int(limits.priorityMin, limits.priorityMax, "Higher is received first. Default: the queue's default priority."),
    messageGroupId: { type: "string", minLength: 1, maxLength: limits.fifoIdMaxLength, description: "FIFO queues: required; standard queues: a fair-queue group." },
    messageDeduplicationId: { type: "string", minLength: 1, maxLength: limits.fifoIdMaxLength, description: "FIFO queues without content-based deduplication: required." },
  },
  ["body"],
);

export const redriveBody = object({
  destination: { ...anyQueueName, description: "The queue to move the messages to. Default: each message goes back to the queue it was dead-lettered from." },
  maxPerSecond: int(limits.moveTaskRateMin, limits.moveTaskRateMax, "Messages moved per second at most. Default: as fast as the store allows."),
});

export const attributesBody = object({
  visibilityTimeoutSeconds: int(0, limits.visibilityTimeoutMaxSeconds),
  delaySeconds: int(0, limits.delayMaxSeconds),
  messageRetentionPeriodSeconds: int(limits.retentionMinSeconds, limits.retentionMaxSeconds),
  maximumMessageSizeBytes: int(limits.messageSizeMinBytes, limits.messageSizeMaxBytes),
  receiveMessageWaitTimeSeconds: int(0, limits.waitTimeMaxSeconds),
  redrivePolicy: {
    oneOf: [object({ deadLetterQueue: anyQueueName, maxReceiveCount: int(1, limits.redriveMaxReceiveCountMax) }, ["deadLetterQueue", "maxReceiveCount"]), { type: "null" }],
    description: "Where messages received too often go; null removes it.",
  },
  contentBasedDeduplication: { type: "boolean", description: "FIFO queues only." },
  defaultPriority: int(limits.priorityMin, limits.priorityMax, "Sluice extension: the priority of messages sent without one."),
});

export const createQueueBody = object(
  {
    name: { ...anyQueueName, description: "The new queue's name; a name ending in .fifo makes a FIFO queue." },
    attributes: { ...attributesBody, description: "As PUT /v1/queues/{queue}/attributes takes them; omitted ones get SQS's defaults." },
  },
  ["name"],
);

// ---- responses (documentation: answers are serialized by admin-wire.ts) ----

export const peekedMessageSchema = object({
  messageId: { type: "string" },
  body: { type: "string" },
  attributes: { type: "object", additionalProperties: { type: "string" }, description: "System attributes as SQS names them (SentTimestamp, ApproximateReceiveCount, MessageGroupId, …)." },
  messageAttributes: { type: "object", additionalProperties: object({ dataType: { type: "string" }, stringValue: { type: "string" }, binaryValue: { type: "string" } }) },
  sentAt: dateTime,
  visibleAt: dateTime,
  receiveCount: { type: "integer" },
  priority: { type: "integer" },
  state: { type: "string", enum: ["visible", "inFlight", "delayed"] },
});

export const sentMessageSchema = object({
  messageId: { type: "string" },
  md5OfBody: { type: "string" },
  md5OfMessageAttributes: nullable({ type: "string" }),
  sequenceNumber: nullable({ type: "string" }),
});

export const redriveTaskSchema = object({
  taskHandle: { type: "string" },
  source: { type: "string" },
  destination: nullable({ type: "string" }),
  status: { type: "string", enum: ["RUNNING", "COMPLETED", "CANCELLING", "CANCELLED", "FAILED"] },
  movedCount: { type: "integer" },
  toMoveCount: { type: "integer", description: "The source's visible messages when the task started." },
  maxPerSecond: nullable({ type: "integer" }),
  failureReason: nullable({ type: "string" }),
  startedAt: dateTime,
  updatedAt: dateTime,
});
