/**
 * The admin routes, as route-specs.ts describes the jobs routes (and registered and published the
 * same way): what the dashboard and the `sluice` CLI use to list, inspect and fix queues.
 * docs/admin-api.md tells the story; `scope` is the credentials scope each one needs.
 */
import * as a from "./admin-schemas.js";
import { type ResponseSpec, type RouteSpec, bodyErrors, error, invalid, jobResponse, ref, wrap } from "./route-specs.js";
import * as s from "./schemas.js";

const queueNotFound = error("QueueNotFound.");
const queueResponse: ResponseSpec = { description: "The queue.", schema: wrap("queue", ref("Queue")) };
const taskResponse: ResponseSpec = { description: "The redrive.", schema: wrap("task", ref("RedriveTask")) };
const statsStream = (what: string): ResponseSpec => ({ description: `text/event-stream: ${what}`, contentType: "text/event-stream", schema: { type: "string" } });
const queuePage = { type: "object", properties: { queues: { type: "array", items: ref("Queue") }, nextCursor: { type: ["string", "null"] } }, required: ["queues", "nextCursor"] };

export const adminRouteSpecs: RouteSpec[] = [
  {
    operationId: "listQueues",
    method: "GET",
    path: "/v1/queues",
    summary: "Every queue (SQS-made and FIFO ones too) in name order, a page at a time, each with the stats of GET /v1/queues/{queue}.",
    tag: "admin",
    scopes: ["read", "admin"],
    querystring: a.listQueuesQuery,
    responses: {
      "200": { description: "A page of queues; nextCursor is null on the last one.", schema: queuePage },
      "400": invalid("prefix, limit, or a cursor this API did not return"),
    },
  },
  {
    operationId: "createQueue",
    method: "POST",
    path: "/v1/queues",
    summary: "Create a queue, as SQS CreateQueue: the same name with the same attributes answers the existing queue.",
    tag: "admin",
    scopes: ["admin"],
    body: a.createQueueBody,
    responses: {
      "201": { description: "Created.", schema: wrap("queue", ref("Queue")) },
      "200": { description: "It existed already, with these attributes.", schema: wrap("queue", ref("Queue")) },
      "400": error("ValidationFailed, InvalidAttributeValue or InvalidParameterValue: the name, a value out of range, a redrivePolicy whose dead-letter queue is missing or of the other type."),
      "409": error("QueueAlreadyExists (other attributes) or QueueDeletedRecently (a queue of that name was deleted less than 60 s ago)."),
      ...bodyErrors,
    },
  },
  {
    operationId: "deleteQueue",
    method: "DELETE",
    path: "/v1/queues/{queue}",
    summary: "Delete the queue with its messages and its jobs, as SQS DeleteQueue.",
    tag: "admin",
    scopes: ["admin"],
    params: a.anyQueueParams,
    responses: {
      "200": { description: "Deleted.", schema: { type: "object", properties: { deleted: { type: "string", description: "The queue's name." } }, required: ["deleted"] } },
      "400": invalid("the queue name"),
      "404": queueNotFound,
    },
  },
  {
    operationId: "streamQueues",
    method: "GET",
    path: "/v1/events/queues",
    summary: "Server-Sent Events: the first page of GET /v1/queues (same parameters) at once, then again every intervalSeconds.",
    tag: "admin",
    scopes: ["read", "admin"],
    querystring: a.queuesEventsQuery,
    responses: {
      "200": statsStream("`event: queues`, `data: {\"at\", \"queues\": [Queue…], \"nextCursor\"}`, at once and then every intervalSeconds."),
      "400": invalid("prefix, limit, cursor or intervalSeconds"),
    },
  },
  {
    operationId: "streamQueue",
    method: "GET",
    path: "/v1/queues/{queue}/events",
    summary: "Server-Sent Events of one queue: its stats and its latest redrives at once, then again every intervalSeconds; ends when the queue is deleted.",
    tag: "admin",
    scopes: ["read", "admin"],
    params: a.anyQueueParams,
    querystring: a.queueEventsQuery,
    responses: {
      "200": statsStream("`event: queue`, `data: {\"at\", \"queue\": Queue, \"redrives\": [RedriveTask…], \"deadLetterSources\": [queue names that dead-letter into it, up to 10]}`; a last `event: gone` if the queue is deleted."),
      "400": invalid("the queue name or intervalSeconds"),
      "404": queueNotFound,
    },
  },
  {
    operationId: "peekMessages",
    method: "GET",
    path: "/v1/queues/{queue}/messages",
    summary: "Peek: up to limit messages with their bodies and attributes — visible ones first, then in flight or delayed — without changing their visibility or receive counts.",
    tag: "admin",
    scopes: ["read", "admin"],
    params: a.anyQueueParams,
    querystring: a.peekQuery,
    responses: {
      "200": { description: "The messages.", schema: { type: "object", properties: { messages: { type: "array", items: ref("PeekedMessage") } }, required: ["messages"] } },
      "400": invalid("the queue name or limit"),
      "404": queueNotFound,
    },
  },
  {
    operationId: "sendMessage",
    method: "POST",
    path: "/v1/queues/{queue}/messages",
    summary: "Send one message (a test message, say), as SQS SendMessage would.",
    tag: "admin",
    scopes: ["admin"],
    params: a.anyQueueParams,
    body: a.sendMessageBody,
    responses: {
      "201": { description: "Sent.", schema: wrap("message", ref("SentMessage")) },
      "400": error("ValidationFailed, InvalidParameterValue or InvalidMessageContents: a body field, a message attribute, or characters SQS refuses; FIFO fields missing or misplaced."),
      "404": queueNotFound,
      "413": error("MessageTooLong: the body and attributes are over the queue's MaximumMessageSize, or the request body over 4 MiB."),
      "415": bodyErrors["415"],
    },
  },
  {
    operationId: "purgeQueue",
    method: "POST",
    path: "/v1/queues/{queue}/purge",
    summary: "Delete every message of the queue (as SQS PurgeQueue: once a minute); live jobs among them end canceled.",
    tag: "admin",
    scopes: ["admin"],
    params: a.anyQueueParams,
    responses: {
      "200": { description: "Purged.", schema: { type: "object", properties: { deleted: { type: "integer", description: "Messages deleted." } }, required: ["deleted"] } },
      "400": invalid("the queue name"),
      "404": queueNotFound,
      "409": error("PurgeQueueInProgress: the queue was purged less than 60 s ago."),
      ...bodyErrors,
    },
  },
  {
    operationId: "updateQueueAttributes",
    method: "PUT",
    path: "/v1/queues/{queue}/attributes",
    summary: "Change the queue's SQS attributes that SQS lets change (omitted fields keep their value).",
    tag: "admin",
    scopes: ["admin"],
    params: a.anyQueueParams,
    body: a.attributesBody,
    responses: {
      "200": queueResponse,
      "400": error("ValidationFailed, InvalidAttributeValue or InvalidParameterValue: a value out of range, a redrivePolicy whose dead-letter queue is missing or of the other type, contentBasedDeduplication on a standard queue."),
      "404": queueNotFound,
      ...bodyErrors,
    },
  },
  {
    operationId: "startRedrive",
    method: "POST",
    path: "/v1/queues/{queue}/redrive",
    summary: "Redrive a dead-letter queue: a move task moves its messages back to the queues they came from (or to destination), at most maxPerSecond.",
    tag: "admin",
    scopes: ["admin"],
    params: a.anyQueueParams,
    body: a.redriveBody,
    responses: {
      "201": taskResponse,
      "400": error("ValidationFailed or InvalidParameterValue: the queue is no queue's dead-letter queue, the destination is the queue itself or of the other type, a bad maxPerSecond."),
      "404": error("QueueNotFound: the queue or the destination does not exist."),
      "409": error("RedriveInProgress: a redrive of this queue is running."),
      ...bodyErrors,
    },
  },
  {
    operationId: "listRedrives",
    method: "GET",
    path: "/v1/queues/{queue}/redrive",
    summary: "The queue's latest redrives (as source), newest first, with their progress.",
    tag: "admin",
    scopes: ["read", "admin"],
    params: a.anyQueueParams,
    responses: {
      "200": { description: "Up to 10 redrives.", schema: { type: "object", properties: { tasks: { type: "array", items: ref("RedriveTask") } }, required: ["tasks"] } },
      "400": invalid("the queue name"),
      "404": queueNotFound,
    },
  },
  {
    operationId: "cancelRedrive",
    method: "POST",
    path: "/v1/redrives/{taskHandle}/cancel",
    summary: "Cancel a running redrive: it stops after the batch in progress; messages moved so far stay moved.",
    tag: "admin",
    scopes: ["admin"],
    params: a.taskParams,
    responses: {
      "200": taskResponse,
      "400": invalid("the taskHandle"),
      "404": error("ResourceNotFound: no redrive has this taskHandle."),
      "409": error("RedriveAlreadyFinished: the redrive is not running."),
      ...bodyErrors,
    },
  },
  {
    operationId: "retryJob",
    method: "POST",
    path: "/v1/jobs/{id}/retry",
    summary: "Run a failed or canceled job again: queued at once, its attempts starting over (its message leaves the dead-letter queue).",
    tag: "admin",
    scopes: ["admin"],
    params: s.jobParams,
    responses: { "200": jobResponse, "400": invalid("the id"), "404": error("JobNotFound."), "409": error("JobNotRetryable: the job is queued, running or succeeded."), ...bodyErrors },
  },
];

export const adminComponentSchemas: Record<string, s.JsonSchema> = {
  PeekedMessage: a.peekedMessageSchema,
  SentMessage: a.sentMessageSchema,
  RedriveTask: a.redriveTaskSchema,
};
