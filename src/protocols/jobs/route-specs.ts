/**
 * Every jobs API route, once: method, path, schemas and documentation. routes.ts registers them
 * with these schemas (request validation) and openapi.ts publishes them (/openapi.json), so the
 * documentation can't drift from what the server enforces.
 */
import type { Scope } from "../auth/principal.js";
import { anyQueueParams } from "./admin-schemas.js";
import * as s from "./schemas.js";
import type { JsonSchema } from "./schemas.js";

export interface ResponseSpec {
  description: string;
  /** A $ref name under components/schemas, or an inline schema. */
  schema?: JsonSchema;
  contentType?: string;
  /** The same answer in another media type (the request chose it, e.g. with ?wait). */
  alsoAs?: { contentType: string; schema: JsonSchema };
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

export interface RouteSpec {
  operationId: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** OpenAPI style: /v1/jobs/{id}. */
  path: string;
  summary: string;
  tag: "jobs" | "workers" | "queues" | "events" | "meta" | "admin";
  /** Who may call it (docs/security.md): a bearer token with any one of these scopes. */
  scopes: readonly Scope[];
  params?: JsonSchema;
  querystring?: JsonSchema;
  headers?: JsonSchema;
  body?: JsonSchema;
  responses: Record<string, ResponseSpec>;
}

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const wrap = (key: string, schema: JsonSchema): JsonSchema => ({ type: "object", properties: { [key]: schema }, required: [key] });
export const jobResponse: ResponseSpec = { description: "The job.", schema: wrap("job", ref("Job")) };
export const error = (description: string): ResponseSpec => ({ description, schema: ref("Error") });
export const invalid = (what: string): ResponseSpec => error(`ValidationFailed: ${what}.`);
/** What every POST and PUT can answer about its body, whatever the route (a bodyless one included). */
export const bodyErrors = {
  "413": error("MessageTooLong: the request body is over 4 MiB."),
  "415": error("ValidationFailed (code): the body is not JSON — Content-Type must be application/json."),
};
const queueDeletedRecently = error("QueueDeletedRecently: the queue would be created, but one of that name was deleted less than 60 s ago.");
const leaseErrors = {
  "400": invalid("a path parameter or a body field"),
  "404": error("JobNotFound."),
  "409": error("LeaseMismatch, LeaseExpired or JobAlreadyFinished: stop working on this job."),
  ...bodyErrors,
};
const sse: ResponseSpec = { description: "text/event-stream of job events (see the Event schema for each `data:`).", contentType: "text/event-stream", schema: { type: "string" } };

export const routeSpecs: RouteSpec[] = [
  {
    operationId: "submitJob",
    scopes: ["submit"],
    method: "POST",
    path: "/v1/queues/{queue}/jobs",
    summary: "Submit a job (creates the queue and its <queue>-dlq on first use); with ?wait=N, answer once it is terminal or N seconds pass.",
    tag: "jobs",
    params: s.queueParams,
    querystring: s.submitJobQuery,
    headers: s.submitHeaders,
    body: s.submitBody,
    responses: {
      "201": { ...jobResponse, description: "Created.", headers: { Location: { description: "/v1/jobs/{id}", schema: { type: "string" } } } },
      "200": { ...jobResponse, description: "Idempotent replay: the job an earlier submit with this key and body created.", headers: { "Idempotent-Replayed": { description: "true", schema: { type: "string" } } } },
      "400": invalid("the queue name, a query parameter, the Idempotency-Key header or a body field (a private webhook target included)"),
      "404": error("JobNotFound: with ?wait, the job was deleted with its queue (SQS DeleteQueue) during the hold."),
      "409": queueDeletedRecently,
      "413": error("MessageTooLong: the input is over 1 MiB of JSON (or over the queue's MaximumMessageSize), or the request body over 4 MiB."),
      "415": bodyErrors["415"],
      "422": error("IdempotencyKeyReused: the key was used with a different body."),
    },
  },
  {
    operationId: "submitJobs",
    scopes: ["submit"],
    method: "POST",
    path: "/v1/queues/{queue}/jobs/batch",
    summary:
      "Submit 1–100 jobs in one request, each as a lone submit (its own idempotencyKey, its own outcome). Without ?wait: {results:[…]} in entry order. With ?wait=N: NDJSON, one line per entry, written as soon as that job is terminal or its N seconds pass.",
    tag: "jobs",
    params: s.queueParams,
    querystring: s.submitJobQuery,
    body: s.submitBatchBody,
    responses: {
      "200": {
        description: "One result per entry: {index, status, job} (status 201 created, 200 idempotent replay) or {index, status, error} with the status and error a lone submit would have had. With ?wait the body is application/x-ndjson: one BatchSubmitResult per line, in the order they settled.",
        schema: { type: "object", properties: { results: { type: "array", items: ref("BatchSubmitResult") } }, required: ["results"] },
        alsoAs: { contentType: "application/x-ndjson", schema: { type: "string", description: "Lines of BatchSubmitResult JSON." } },
      },
      "400": invalid("the queue name, ?wait, or the shape of the body (then no entry is submitted)"),
      ...bodyErrors,
    },
  },
  {
    operationId: "getJob",
    scopes: ["read", "submit"],
    method: "GET",
    path: "/v1/jobs/{id}",
    summary: "Get a job; with ?wait=N, hold until it is terminal or N seconds pass.",
    tag: "jobs",
    params: s.jobParams,
    querystring: s.getJobQuery,
    responses: { "200": jobResponse, "400": invalid("the id or ?wait"), "404": error("JobNotFound.") },
  },
  {
    operationId: "cancelJob",
    scopes: ["submit", "admin"],
    method: "POST",
    path: "/v1/jobs/{id}/cancel",
    summary: "Cancel: a queued job at once; a running job gets cancelRequested.",
    tag: "jobs",
    params: s.jobParams,
    responses: { "200": jobResponse, "400": invalid("the id"), "404": error("JobNotFound."), "409": error("JobAlreadyFinished."), ...bodyErrors },
  },
  {
    operationId: "listJobs",
    scopes: ["read"],
    method: "GET",
    path: "/v1/queues/{queue}/jobs",
    summary: "List a queue's jobs, newest first.",
    tag: "jobs",
    params: s.queueParams,
    querystring: s.listJobsQuery,
    responses: {
      "200": { description: "A page of jobs.", schema: { type: "object", properties: { jobs: { type: "array", items: ref("Job") }, nextCursor: { type: ["string", "null"] } }, required: ["jobs", "nextCursor"] } },
      "400": invalid("the queue name, status, limit, or a cursor this API did not return"),
      "404": error("QueueNotFound."),
    },
  },
  {
    operationId: "streamJobEvents",
    scopes: ["read", "submit"],
    method: "GET",
    path: "/v1/jobs/{id}/events",
    summary: "Server-Sent Events of one job: a job.snapshot, then its events; ends after the terminal one.",
    tag: "events",
    params: s.jobParams,
    responses: { "200": sse, "400": invalid("the id"), "404": error("JobNotFound.") },
  },
  {
    operationId: "streamEvents",
    scopes: ["read"],
    method: "GET",
    path: "/v1/events",
    summary: "Server-Sent Events of every job, or of one queue's with ?queue=.",
    tag: "events",
    querystring: s.eventsQuery,
    responses: { "200": sse, "400": invalid("?queue is not a queue name") },
  },
  {
    operationId: "leaseJobs",
    scopes: ["work"],
    method: "POST",
    path: "/v1/queues/{queue}/leases",
    summary: "Worker: report finished jobs (complete / fail, optional), then lease up to max jobs, long-polling up to waitSeconds (not when reporting).",
    tag: "workers",
    params: s.queueParams,
    body: s.leaseBody,
    responses: {
      "200": {
        description: "Leased jobs (possibly none); with complete / fail in the request, `results`: one per entry, complete entries first, in request order.",
        schema: { type: "object", properties: { jobs: { type: "array", items: ref("LeasedJob") }, results: { type: "array", items: ref("AckResult") } }, required: ["jobs"] },
      },
      "400": invalid("the queue name or a body field"),
      "409": queueDeletedRecently,
      "413": error("MessageTooLong: an output over 1 MiB of JSON (nothing is applied or leased), or a request body over 4 MiB."),
      "415": bodyErrors["415"],
    },
  },
  {
    operationId: "heartbeatJob",
    scopes: ["work"],
    method: "POST",
    path: "/v1/jobs/{id}/heartbeat",
    summary: "Worker: extend the lease, report progress, learn of a cancel request.",
    tag: "workers",
    params: s.jobParams,
    body: s.heartbeatBody,
    responses: {
      "200": {
        description: "Lease extended.",
        schema: { type: "object", properties: { cancelRequested: { type: "boolean" }, leaseExpiresAt: { type: "string", format: "date-time" } }, required: ["cancelRequested", "leaseExpiresAt"] },
      },
      ...leaseErrors,
    },
  },
  {
    operationId: "completeJob",
    scopes: ["work"],
    method: "POST",
    path: "/v1/jobs/{id}/complete",
    summary: "Worker: the job succeeded, with this output.",
    tag: "workers",
    params: s.jobParams,
    body: s.completeBody,
    responses: { "200": jobResponse, ...leaseErrors, "413": error("MessageTooLong: an output over 1 MiB of JSON, or a request body over 4 MiB.") },
  },
  {
    operationId: "failJob",
    scopes: ["work"],
    method: "POST",
    path: "/v1/jobs/{id}/fail",
    summary: "Worker: the attempt failed; retried with backoff unless not retryable or out of attempts.",
    tag: "workers",
    params: s.jobParams,
    body: s.failBody,
    responses: { "200": jobResponse, ...leaseErrors },
  },
  {
    operationId: "releaseJob",
    scopes: ["work"],
    method: "POST",
    path: "/v1/jobs/{id}/release",
    summary: "Worker: hand back a lease not started (shutting down): queued again at once, the attempt given back; canceled instead if a cancel was requested.",
    tag: "workers",
    params: s.jobParams,
    body: s.releaseBody,
    responses: { "200": jobResponse, ...leaseErrors },
  },
  {
    operationId: "getQueue",
    scopes: ["read", "work", "submit"],
    method: "GET",
    path: "/v1/queues/{queue}",
    summary: "A queue's SQS attributes, job settings and live stats (any queue: FIFO and SQS-made ones too).",
    tag: "queues",
    params: anyQueueParams,
    responses: { "200": { description: "The queue.", schema: wrap("queue", ref("Queue")) }, "400": invalid("the queue name"), "404": error("QueueNotFound.") },
  },
  {
    operationId: "updateQueue",
    scopes: ["admin"],
    method: "PUT",
    path: "/v1/queues/{queue}",
    summary: "Change a job queue's settings (omitted fields keep their value; creates the queue if missing).",
    tag: "queues",
    params: s.queueParams,
    body: s.settingsBody,
    responses: {
      "200": { description: "The queue.", schema: wrap("queue", ref("Queue")) },
      "400": invalid("the queue name or a setting"),
      "409": queueDeletedRecently,
      ...bodyErrors,
    },
  },
  {
    operationId: "getOpenApi",
    scopes: ["read", "submit", "work", "admin"],
    method: "GET",
    path: "/openapi.json",
    summary: "This document.",
    tag: "meta",
    responses: { "200": { description: "OpenAPI 3.1.", schema: { type: "object" } } },
  },
];

export const componentSchemas: Record<string, JsonSchema> = {
  Job: s.jobSchema,
  LeasedJob: s.leasedJobSchema,
  JobError: s.jobErrorSchema,
  WebhookDelivery: s.webhookDeliverySchema,
  Queue: s.queueSchema,
  Event: s.eventSchema,
  Error: s.errorSchema,
  AckResult: s.ackResultSchema,
  BatchSubmitResult: s.batchSubmitResultSchema,
};
