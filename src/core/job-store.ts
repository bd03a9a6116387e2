/**
 * The store methods behind the jobs API (Store extends this). Noun-first, one params object each,
 * plain data in and out — no callbacks: a store may run in another process or on another machine.
 * The decisions — which transition a lease, heartbeat, completion or failure makes — are core's
 * pure functions in transitions.ts; a store reads the job, calls them, and applies the result (job
 * row, message effect, webhook outbox rows) in ONE transaction, the same one as the queue
 * message's change. Composite operations (jobCreateMany with its handoff, jobLease with its acks)
 * are one transaction each; a store may also commit several calls together, but every call must
 * mean the same as if it had committed alone (docs/writing-a-store.md).
 */
import type { JobQueueSettings, BackoffSettings } from "./job-settings.js";
import type { LeaseHold, LeaseLimits } from "./lease-limits.js";
import type { JobError, JobEventType, JobRecord, JobStatus, LeasedJob } from "./job.js";
import type { NewMessage } from "./message.js";

/** A job as core builds it at submit; the store adds seq and messageSeq. */
export type NewJob = Omit<JobRecord, "seq" | "messageSeq">;

export interface IdempotencyClaim {
  key: string;
  /** SHA-256 of the request body's canonical JSON. */
  fingerprint: string;
  expiresAtMs: number;
}

/** One job to create, with its message and, optionally, its Idempotency-Key's claim. */
export interface JobCreateItem {
  job: NewJob;
  message: NewMessage;
  idempotency?: IdempotencyClaim;
}

export type JobCreateResult =
  /** The job as created (queued), with its seq and messageSeq. */
  | { created: true; job: JobRecord }
  /** The key was already claimed (and not expired): the job it names and the body it was claimed with. */
  | { created: false; job: JobRecord; fingerprint: string };

/** A transition that was applied, with the lifecycle events it produced (for SSE and waiters). */
export interface JobChange {
  job: JobRecord;
  events: JobEventType[];
  /**
   * The job's change count after this change, from a store that keeps one (PostgreSQL): a new
   * job is at 1 (core tells of a submit with it), each change adds 1. Carried in the notice, it
   * lets another node drop a notice that arrives after a later one. A store may leave it out.
   */
  version?: number;
  /**
   * Jobs this change moved in the same transaction: a finished parent's waiting children
   * (dependsOn), queued or ended by it — and theirs, in turn. Absent when there were none.
   */
  followOn?: JobChange[];
}

/** What the failure of an attempt needs to decide between retry, failed and canceled. */
export interface RetryPolicy {
  backoff: BackoffSettings;
  /** A uniform draw in [0, 1) for the backoff's jitter, drawn by core so stores stay deterministic. */
  random: number;
  /**
   * The queue's dead-letter queue, where a failed job's message goes (deleted when absent, or when
   * the queue was deleted since core read it: the store checks in its write).
   */
  deadLetterQueueId?: number;
  deadLetterSourceQueueName?: string;
  resultTtlSeconds: number;
}

/**
 * A change to one job by id — a worker's heartbeat, completion, failure or release, an operator's
 * cancel, the sweep's expiry of a lease or attempt past its time. The store reads the job inside
 * its write and applies transitions.actionTransition's decision (the same as the lone call's).
 */
export type JobAction =
  | { kind: "heartbeat"; id: string; leaseToken: string; leaseSeconds?: number; progress?: number }
  /** `outputAttachmentsJson`: the job's output attachments (JobRecord's), written with the rest. */
  | { kind: "complete"; id: string; leaseToken: string; outputJson: string; resultTtlSeconds: number; outputAttachmentsJson?: string }
  | (RetryPolicy & { kind: "fail"; id: string; leaseToken: string; error: JobError; retryable: boolean; retryAfterSeconds?: number })
  /** A lease handed back unstarted: queued again with its attempt given back. */
  | { kind: "release"; id: string; leaseToken: string; resultTtlSeconds: number }
  | { kind: "cancel"; id: string; resultTtlSeconds: number }
  /** Re-checked on the job as read in the write: a change with no events when it is not past its time (any more). */
  | (RetryPolicy & { kind: "expire"; id: string });

/**
 * A finished job's outcome carried by a lease request (the worker's "complete this, give me the
 * next": BullMQ's moveToFinished), applied before the lease in the same write.
 */
export type JobAck = Extract<JobAction, { kind: "complete" | "fail" }>;

/**
 * Each action succeeds or fails on its own: a refusal (JobNotFound, LeaseExpired, …) is this
 * action's answer, and it wrote nothing.
 */
export type JobActionResult = { ok: true; change: JobChange } | { ok: false; error: { code: string; message: string } };

export interface JobLeaseParams extends RetryPolicy {
  queueId: number;
  queueName: string;
  max: number;
  nowMs: number;
  leaseSeconds: number;
  /** Messages sent before this are past retention and never leased. */
  minSentAtMs: number;
  leaseToken: string;
  /**
   * Defaults for adopting a message that has no job (sent through the SQS API, or redriven after
   * its job was pruned), and the queue's account the adopted job belongs to (absent: the server's own).
   */
  adopt: { maxAttempts: number; timeoutSeconds?: number; account?: string };
  /** Applied first, in order, in the same transaction; `max` may then be 0 (acks only). */
  acks?: JobAck[];
  /**
   * The queue's limits on starting jobs (lease-limits.ts), enforced inside the lease's write for
   * every worker and node together; absent when the queue has none.
   */
  limits?: LeaseLimits;
  /**
   * The worker's labels (requirements.ts): besides jobs that require nothing, it may lease jobs
   * of every requirement class these labels contain. Absent: only jobs that require nothing.
   */
  labels?: Record<string, string>;
}

/**
 * A long-polling worker's lease, named by its leaseToken, that a submit hands its new jobs to:
 * the lease runs in the submit's own transaction, so the job reaches the worker with one commit
 * (and one sync) instead of two.
 */
export type JobHandoff = Omit<JobLeaseParams, "acks">;

export interface JobCreateManyResult {
  /** One per item, in order. */
  results: JobCreateResult[];
  /** What the handoff leased; absent without one, when no item was created, or when it failed. */
  handoff?: JobLeaseResult;
}

export interface JobLeaseResult {
  leased: LeasedJob[];
  /** Every transition made, the leases' included (a job out of attempts failed, a cancel-requested job canceled). */
  changes: JobChange[];
  /** One per `acks` entry, in order (empty without acks). */
  acks: JobActionResult[];
  /**
   * Set when a limit (params.limits) held the lease below `max` with jobs ready: which, and for
   * the rate limit when a next start is allowed. The caller waits, as a long poll does.
   */
  limited?: LeaseHold;
}

export type WebhookDeliveryStatus = "pending" | "delivered" | "failed";

export interface WebhookDelivery {
  /** The `webhook-id`: stable across retries of one event, so receivers can dedupe on it. */
  id: string;
  jobId: string;
  event: JobEventType;
  url: string;
  /** The job as it was at the event. */
  job: JobRecord;
  status: WebhookDeliveryStatus;
  attempts: number;
  createdAtMs: number;
  nextAttemptAtMs?: number;
  lastAttemptAtMs?: number;
  lastStatusCode?: number;
  lastError?: string;
  deliveredAtMs?: number;
}

/** A running attempt's streamed output (JobStore extends it). */
export interface JobOutputStore {
  /**
   * Appends to a running attempt's output: under a live lease (transitions.requireLiveLease, whose
   * SluiceError it throws, nothing written), stores `chunksJson` (a JSON array of 1 or more chunks)
   * as the attempt's chunks from `index` (the count it had) and appends one job.output event
   * (its output column: outputColumnJson) in the same write. Answers the job (unchanged), the
   * event and the attempt's count of chunks after it.
   */
  jobOutputAppend(p: { id: string; leaseToken: string; nowMs: number; chunksJson: string; count: number }): Promise<{ change: JobChange; index: number; total: number }>;
  /**
   * The job's latest attempt's chunks from `fromIndex`, at most `limit`, each a JSON text, with the
   * attempt's count; undefined when the job does not exist. Kept as long as the job.
   */
  jobOutputRead(p: { id: string; fromIndex: number; limit: number }): Promise<{ attempt: number; chunksJson: string[]; total: number } | undefined>;
}

/** The webhook outbox job transitions feed (JobStore extends it). */
export interface WebhookOutboxStore {
  /**
   * Pending deliveries due by `nowMs`, oldest first, each claimed (its next attempt pushed to
   * `nowMs + claimMs`, as answered) so that a crash mid-delivery retries it later and no two dispatchers send it at once.
   */
  webhookDeliveryClaim(p: { nowMs: number; limit: number; claimMs: number }): Promise<WebhookDelivery[]>;
  /** The earliest nextAttemptAtMs of a pending delivery. */
  webhookDeliveryNextDueAt(): Promise<number | undefined>;
  /** Records one attempt: delivered, or failed with the next attempt time (none = give up). */
  webhookDeliveryRecord(p: { id: string; nowMs: number; delivered: boolean; statusCode?: number; error?: string; nextAttemptAtMs?: number }): Promise<void>;
  webhookDeliveryList(p: { jobId: string }): Promise<WebhookDelivery[]>;
}

export interface JobStore extends JobOutputStore, WebhookOutboxStore {
  /**
   * Inserts each item's job and message, in order, all in one transaction (all or nothing). With
   * `idempotency`, first looks the key up (scoped to the job's queue): a live claim answers its job
   * instead (`created: false`, an earlier item of the same call included); an expired one is
   * replaced. A queue deleted since the caller read it is refused (QueueNotFound, nothing written).
   * `handoff`: once the items are in and at least one was created, runs that lease as jobLease
   * would (no acks) in the same transaction and answers its result; a failing handoff is undone
   * alone and leaves the creates be. A store that commits calls in groups may run it after the
   * group's other writes, at the latest `nowMs` any write of the group was given (never earlier).
   */
  jobCreateMany(p: { items: JobCreateItem[]; nowMs: number; handoff?: JobHandoff }): Promise<JobCreateManyResult>;
  jobGet(p: { id: string }): Promise<JobRecord | undefined>;
  /** Newest first (seq descending), below `beforeSeq` when paging. */
  jobList(p: { queueId: number; status?: JobStatus; beforeSeq?: number; limit: number }): Promise<JobRecord[]>;
  jobCountByStatus(p: { queueId: number }): Promise<Record<JobStatus, number>>;

  /**
   * Leases up to `max` jobs: takes ready messages in receive order (priority high→low, then oldest),
   * applies transitions.leaseTransition to each one's job, and keeps going until `max` jobs are
   * leased or no message is ready. Messages whose job is finished are deleted on the way.
   * `acks` are applied before, each as jobTransitionMany would (a refused one writes nothing);
   * if the lease then fails, the acks stand and the call rejects with the lease's error. A store
   * that commits calls in groups may run the lease after the group's other writes, at the latest
   * `nowMs` any of them was given, so a worker's report gets the jobs submitted beside it.
   */
  jobLease(p: JobLeaseParams): Promise<JobLeaseResult>;
  /**
   * The actions, in order, in one write: each job read and changed as transitions.actionTransition
   * decides, one answer per action, in order. A batch of them is how core completes, expires or
   * cancels many jobs with one call (jobs/job-actions.ts runs a lone one).
   */
  jobTransitionMany(p: { nowMs: number; actions: JobAction[] }): Promise<JobActionResult[]>;
  /**
   * An operator's retry of a failed or canceled job (transitions.retryTransition; JobNotRetryable
   * for any other status, nothing written): in one write, the job is queued again and `message`
   * (core builds it: the job's input, visible at `nowMs`) is enqueued on the job's queue; the
   * job's old message, if it still has one (in the dead-letter queue), is deleted.
   */
  jobRetry(p: { id: string; nowMs: number; message: NewMessage }): Promise<JobChange>;
  /** Running jobs whose lease expired or whose attempt timed out, oldest first; `account` as JobRecord's. */
  jobListExpired(p: { nowMs: number; limit: number }): Promise<Array<{ id: string; queueName: string; account?: string }>>;
  /** Deletes up to `limit` finished jobs past their expiresAtMs, and expired idempotency keys. */
  jobPrune(p: { nowMs: number; limit: number }): Promise<{ jobs: number; idempotencyKeys: number }>;

  jobQueueSettingsGet(p: { queueId: number }): Promise<JobQueueSettings | undefined>;
  jobQueueSettingsPut(p: { queueId: number; settings: JobQueueSettings; nowMs: number }): Promise<void>;
}
