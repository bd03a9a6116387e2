/**
 * The jobs API's wire shapes (DESIGN.md "Jobs API"), as the server sends and accepts them.
 * Kept here, not imported from the server, so the SDK installs without the server.
 */

/** Any value that survives JSON.stringify → JSON.parse unchanged. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "canceled";

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
  /** GET /v1/jobs/{id} only. */
  webhookDeliveries?: WebhookDelivery[];
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
  timeoutSeconds?: number;
  maxAttempts?: number;
  webhook?: WebhookSpec;
  metadata?: Record<string, JsonValue>;
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
export interface LeasedJob<Input = JsonValue> extends Job<Input> {
  leaseId: string;
  leaseExpiresAt: string;
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

export interface CompleteRequest {
  leaseId: string;
  output: JsonValue;
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
