/**
 * The jobs API's wire shapes (docs/jobs-api.md), as the server sends and accepts them.
 * Kept here, not imported from the server, so the SDK installs without the server.
 */

import type { Attachment, AttachmentInfo } from "./attachment-shape.js";

export type { Attachment, AttachmentInfo, ReadOptions } from "./attachment-shape.js";

/** Any value that survives JSON.stringify → JSON.parse unchanged. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** `waiting`: its dependsOn parents have not all finished yet. */
export type JobStatus = "waiting" | "queued" | "running" | "succeeded" | "failed" | "canceled";

/** What a failed or canceled parent does to a job that depends on it: fail (or cancel) it too, or run it anyway. */
export type OnParentFailure = "fail" | "ignore";

export const terminalStatuses: ReadonlySet<JobStatus> = new Set<JobStatus>(["succeeded", "failed", "canceled"]);

export interface JobError {
  message: string;
  type?: string;
}

export interface Job<Input = JsonValue, Output = JsonValue> {
  /** A UUID; also the MessageId of the job's message in its queue. */
  id: string;
  queue: string;
  status: JobStatus;
  input: Input;
  output: Output | null;
  /** The last error, if any attempt failed. */
  error: JobError | null;
  /** Attempts started so far: 1 while the first attempt runs. */
  attempt: number;
  maxAttempts: number;
  /** 0–9, higher first. */
  priority: number;
  /** 0–1, from the worker's heartbeats. */
  progress: number | null;
  /** ISO-8601 UTC timestamps. */
  createdAt: string;
  /** Start of the latest attempt. */
  startedAt: string | null;
  finishedAt: string | null;
  updatedAt?: string;
  idempotencyKey: string | null;
  metadata: Record<string, JsonValue> | null;
  /** A running job whose cancel was requested; its worker sees it on its next heartbeat. */
  cancelRequested?: boolean;
  timeoutSeconds?: number | null;
  /** Queued only: when it can next be leased (delay, retry backoff). */
  availableAt?: string | null;
  /** Running only: when the current lease ends unless extended. */
  leaseExpiresAt?: string | null;
  webhook?: WebhookSpec | null;
  /** The jobs it waits for (dependsOn), in the order given; null without. */
  dependsOn?: string[] | null;
  onParentFailure?: OnParentFailure | null;
  /** Who the job is for: fair sharing and per-tenant caps within its queue. */
  tenant?: string | null;
  /** Labels a worker must carry to run it (every pair); null without. */
  requires?: Record<string, string> | null;
  /** GET /v1/jobs/{id} only. */
  webhookDeliveries?: WebhookDelivery[];
  /** The job's input files by name; the SDK gives each as an Attachment (its bytes a call away), `{}` without. */
  attachments: Readonly<Record<string, Attachment>>;
  /** The files its worker attached to the result (`ctx.attach`), once it succeeded; `{}` without. */
  outputAttachments: Readonly<Record<string, Attachment>>;
}

/** The answer to POST /v1/blobs: PUT the bytes to `uploadUrl` (no Sluice credentials) before `expiresAt`. */
export interface BlobUpload {
  blobId: string;
  uploadUrl: string;
  expiresAt: string;
}

/** GET /v1/blobs/{id}, once its bytes are uploaded. */
export interface BlobInfo extends AttachmentInfo {
  createdAt: string;
  downloadUrl: string;
  expiresAt: string;
}

export interface WebhookDelivery {
  id: string;
  event: string;
  url: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  createdAt: string;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

export interface WebhookSpec {
  url: string;
  /** Which lifecycle events to deliver; the server's default when omitted. */
  events?: string[];
}

/** Body of POST /v1/queues/{queue}/jobs (the Idempotency-Key travels as a header). */
export interface SubmitRequest<Input = JsonValue> {
  input: Input;
  priority?: number;
  delaySeconds?: number;
  /** RFC 3339, e.g. 2026-05-01T09:00:00Z. */
  runAt?: string;
  timeoutSeconds?: number;
  maxAttempts?: number;
  webhook?: WebhookSpec;
  metadata?: Record<string, JsonValue>;
  tenant?: string;
  /** Labels a worker must carry to lease the job. */
  requires?: Record<string, string>;
  /** Job ids that must succeed first (or, in a batch, `{entry: i}` for another entry of it). */
  dependsOn?: Array<string | { entry: number }>;
  onParentFailure?: OnParentFailure;
  /** Uploaded blobs (POST /v1/blobs) by attachment name: at most 16, names 1–64 of [A-Za-z0-9._-]. */
  attachments?: Record<string, string>;
}

export interface JobResponse<Input = JsonValue, Output = JsonValue> {
  job: Job<Input, Output>;
}

export interface JobListResponse {
  jobs: Job[];
  /** Non-null when more jobs follow; pass it back as `cursor`. Newest first. */
  nextCursor: string | null;
}

/** Body of POST /v1/queues/{queue}/leases. */
export interface LeaseRequest {
  /** 0 only with acks: report them, lease nothing. */
  max: number;
  /** Counts as 0 when the request carries acks. */
  waitSeconds: number;
  leaseSeconds: number;
  batchWindowMs?: number;
  /** The worker's labels: it also leases the jobs whose `requires` these contain. */
  labels?: Record<string, string>;
  /** Names the worker in GET /v1/workers. */
  workerId?: string;
  /** Finished jobs to complete before leasing, in the same server write. */
  complete?: CompleteAck[];
  /** Failed attempts to report before leasing. */
  fail?: FailAck[];
}

export interface CompleteAck extends CompleteRequest {
  id: string;
}

export interface FailAck extends FailRequest {
  id: string;
}

/** The answer to one ack: ok, or the error the complete / fail route would have answered. */
export type AckResult = { id: string; ok: true } | { id: string; ok: false; error: { code: string; message: string } };

/** One job handed to a worker: the full job (status running), plus the lease that proves ownership. */
/** The W3C trace context a job was submitted with (its traceparent / tracestate headers). */
export interface JobTrace {
  traceparent: string;
  tracestate?: string;
}

export interface LeasedJob<Input = JsonValue> extends Job<Input> {
  leaseId: string;
  /** The submit's trace context, when it sent one: the worker's span is its child (WorkerOptions.opentelemetry). */
  trace?: JobTrace;
  leaseExpiresAt: string;
  /** A job with dependsOn: its parents as they finished, in dependsOn order (their outputs are its inputs too). */
  parents?: ParentResult[];
}

/** A parent of a leased job, as it finished. */
export interface ParentResult<Output = JsonValue> {
  id: string;
  queue: string;
  status: JobStatus;
  output: Output | null;
  error: JobError | null;
}

/** One Server-Sent Event of GET /v1/events or /v1/jobs/{id}/events. */
export interface JobEventMessage<Input = JsonValue, Output = JsonValue> {
  /** The event's durable id (resume after it with `since` / Last-Event-ID); absent on a job.snapshot. */
  id?: string;
  type: string;
  at: string;
  job: Job<Input, Output>;
}

export type CatchUp = "none" | "latest" | "all";

/** Body of PUT /v1/schedules/{name}: exactly one of cron and everySeconds. */
export interface ScheduleSpec<Input = JsonValue> {
  queue: string;
  /** 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first. */
  cron?: string;
  everySeconds?: number;
  /** IANA zone of the cron expression; default UTC. */
  timezone?: string;
  input: Input;
  options?: { priority?: number; timeoutSeconds?: number; maxAttempts?: number; webhook?: WebhookSpec; metadata?: Record<string, JsonValue>; tenant?: string };
  /** Runs missed while no server ran: none, latest (default) or all. */
  catchUp?: CatchUp;
}

export interface Schedule<Input = JsonValue> {
  name: string;
  queue: string;
  cron: string | null;
  everySeconds: number | null;
  timezone: string;
  input: Input;
  options: NonNullable<ScheduleSpec["options"]>;
  catchUp: CatchUp;
  paused: boolean;
  /** ISO times of the next runs; empty while paused. */
  nextRuns: string[];
  lastRunAt: string | null;
  /** The job the last run created; null before the first run. */
  lastJobId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface LeaseResponse<Input = JsonValue> {
  jobs: LeasedJob<Input>[];
  /** With acks in the request: one per ack, complete entries first, in request order. */
  results?: AckResult[];
}

export interface HeartbeatRequest {
  leaseId: string;
  leaseSeconds?: number;
  /** 0–1. */
  progress?: number;
}

export interface HeartbeatResponse {
  cancelRequested: boolean;
  leaseExpiresAt?: string;
}

/** POST /v1/jobs/{id}/output: whether cancel was requested, and the attempt's chunk count so far. */
export interface OutputResponse {
  cancelRequested: boolean;
  chunks: number;
}

/** GET /v1/jobs/{id}/output-chunks: the latest attempt's chunks from `from`, and where to read on. */
export interface OutputChunksResponse<Chunk = JsonValue> {
  attempt: number;
  chunks: Chunk[];
  next: number;
  done: boolean;
}

/** The data of a `job.output` event: the attempt's chunks from `index`. */
export interface JobOutputEvent<Chunk = JsonValue> {
  type: "job.output";
  at: string;
  jobId: string;
  attempt: number;
  index: number;
  chunks: Chunk[];
}

export interface CompleteRequest {
  leaseId: string;
  output: JsonValue;
  /** Uploaded blobs by name: the job's output files. */
  outputAttachments?: Record<string, string>;
}

export interface FailRequest {
  leaseId: string;
  error: JobError;
  retryable?: boolean;
  retryAfterSeconds?: number;
}

/** Every error response: a stable code from the server's catalog plus a human message. */
export interface ErrorBody {
  error: { code: string; message: string };
}

/** A worker seen in the last 60 s (GET /v1/workers). */
export interface WorkerInfo {
  workerId: string;
  /** Queues it leased from in that minute. */
  queues: string[];
  labels: Record<string, string> | null;
  lastSeenAt: string;
  /** Jobs leased to it that are still running. */
  running: number;
}
