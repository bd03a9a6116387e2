/**
 * The job: its states, its record as core and stores see it, and its lifecycle events.
 * Inputs, outputs and metadata stay JSON text end to end: core never needs their structure,
 * and not re-parsing a 1 MiB input on every read keeps the hot path cheap.
 */

/** `waiting`: submitted with dependsOn, and not all of its parents have finished yet. */
export const jobStatuses = ["waiting", "queued", "running", "succeeded", "failed", "canceled"] as const;
export type JobStatus = (typeof jobStatuses)[number];

export const terminalStatuses: ReadonlySet<JobStatus> = new Set(["succeeded", "failed", "canceled"]);

export function isTerminal(status: JobStatus): boolean {
  return terminalStatuses.has(status);
}

/** Every lifecycle event, as streamed over SSE. */
export const jobEventTypes = [
  "job.waiting",
  "job.queued",
  "job.started",
  "job.progress",
  "job.cancel_requested",
  "job.retrying",
  "job.succeeded",
  "job.failed",
  "job.canceled",
  "job.output",
] as const;
export type JobEventType = (typeof jobEventTypes)[number];

/** The events a webhook may subscribe to (progress is too chatty to be worth a POST each). */
export const webhookEventTypes = ["job.started", "job.retrying", "job.succeeded", "job.failed", "job.canceled"] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];
export const defaultWebhookEvents: WebhookEventType[] = ["job.succeeded", "job.failed", "job.canceled"];

/** A waiting job's message is invisible until its parents are done: its visibility, far in the future. */
export const waitingVisibleAtMs = Number.MAX_SAFE_INTEGER;

/** What a failed or canceled parent (dependsOn) does to its child. */
export const onParentFailureModes = ["fail", "ignore"] as const;
export type OnParentFailure = (typeof onParentFailureModes)[number];

export interface JobError {
  message: string;
  type?: string;
}

/** The W3C trace context a job was submitted with (its `traceparent` / `tracestate` headers). */
export interface JobTrace {
  traceparent: string;
  tracestate?: string;
}

export interface JobWebhook {
  url: string;
  events: WebhookEventType[];
}

export interface JobRecord {
  id: string;
  /** Store-assigned, increasing: the list order and the cursor. */
  seq: number;
  queueId: number;
  queueName: string;
  /**
   * The account its queue belongs to (QueueRecord.account): set only for an account other than the
   * server's own (""). The jobs API answers a job only to a token of its account.
   */
  account?: string;
  status: JobStatus;
  inputJson: string;
  outputJson?: string;
  error?: JobError;
  /** Attempts started so far. */
  attempt: number;
  maxAttempts: number;
  priority: number;
  progress?: number;
  createdAtMs: number;
  startedAtMs?: number;
  finishedAtMs?: number;
  updatedAtMs: number;
  idempotencyKey?: string;
  metadataJson?: string;
  timeoutSeconds?: number;
  webhook?: JobWebhook;
  cancelRequested: boolean;
  /** The current or last lease; a lease is live only while the job is running under it. */
  leaseToken?: string;
  leaseSeconds?: number;
  leaseExpiresAtMs?: number;
  /** Running only: when the current attempt times out. */
  deadlineAtMs?: number;
  /** Queued only: when it can next be leased. */
  availableAtMs?: number;
  /** Terminal only: when the job is pruned. */
  expiresAtMs?: number;
  /** The job's message, while it has one (in its queue or in the dead-letter queue). */
  messageSeq?: number;
  /** Who the job is for: fair sharing and per-tenant caps within its queue (its message's group). */
  tenant?: string;
  /** Jobs that must finish first (dependsOn), in the order given. */
  dependsOn?: string[];
  /** With dependsOn: what a failed or canceled parent does to this job (default fail). */
  onParentFailure?: OnParentFailure;
  /** Labels a worker must carry to lease it (every pair); absent: any worker. */
  requires?: Record<string, string>;
  /** The submit's trace context, handed to the worker with each lease. */
  trace?: JobTrace;
  /** Input attachments (blob/blob.ts's AttachmentInfo by name), JSON text; fixed at submit. */
  attachmentsJson?: string;
  /** Output attachments, JSON text like attachmentsJson; set by the complete. */
  outputAttachmentsJson?: string;
}

/**
 * A submitted job's record: every field present, in one order (the one toJob reads rows into), so
 * every JobRecord shares one shape. Why it matters beyond tidiness: on Node 20, an object spread
 * that adds a property the source lacks (`{ ...job, leaseToken }`) makes an object that outlives
 * young-generation GCs — and with it everything it points to, a job's 1 KiB input included
 * (docs/benchmarks-history.md, "Garbage that outlived its group"). Transitions spread records and set
 * fields; with every field already there, they only overwrite.
 */
export function newJobRecord(job: Omit<JobRecord, "seq" | "messageSeq">, seq: number, messageSeq: number | undefined): JobRecord {
  return {
    id: job.id,
    seq,
    queueId: job.queueId,
    queueName: job.queueName,
    account: job.account,
    status: job.status,
    inputJson: job.inputJson,
    outputJson: job.outputJson,
    error: job.error,
    attempt: job.attempt,
    maxAttempts: job.maxAttempts,
    priority: job.priority,
    progress: job.progress,
    createdAtMs: job.createdAtMs,
    startedAtMs: job.startedAtMs,
    finishedAtMs: job.finishedAtMs,
    updatedAtMs: job.updatedAtMs,
    idempotencyKey: job.idempotencyKey,
    metadataJson: job.metadataJson,
    timeoutSeconds: job.timeoutSeconds,
    webhook: job.webhook,
    cancelRequested: job.cancelRequested,
    leaseToken: job.leaseToken,
    leaseSeconds: job.leaseSeconds,
    leaseExpiresAtMs: job.leaseExpiresAtMs,
    deadlineAtMs: job.deadlineAtMs,
    availableAtMs: job.availableAtMs,
    expiresAtMs: job.expiresAtMs,
    messageSeq,
    tenant: job.tenant,
    dependsOn: job.dependsOn,
    onParentFailure: job.onParentFailure,
    requires: job.requires,
    trace: job.trace,
    attachmentsJson: job.attachmentsJson,
    outputAttachmentsJson: job.outputAttachmentsJson,
  };
}

/** A job as leased by a worker. */
export interface LeasedJob extends JobRecord {
  leaseToken: string;
  leaseExpiresAtMs: number;
}

/** One accepted output request of an attempt: its chunks (a JSON array, as sent) from `index`. */
export interface JobOutputBatch {
  attempt: number;
  index: number;
  chunksJson: string;
}

export interface JobEvent {
  type: JobEventType | "job.snapshot";
  atMs: number;
  job: JobRecord;
  /** A job.output event's chunks. */
  output?: JobOutputBatch;
}
