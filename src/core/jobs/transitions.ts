/**
 * The job state machine as pure functions: given a job (as the store read it inside its write)
 * and what happened, each returns the job's next record, what to do with its message, and the
 * lifecycle events — or throws the SluiceError that rejects the request. Stores call these inside
 * their transaction and apply the result, so every store makes the same decisions.
 */
import { fail } from "../errors.js";
import { retryDelayMs } from "./backoff.js";
import type { JobAction, JobChange, RetryPolicy } from "../job-store.js";
import { type JobError, type JobEventType, type JobRecord, isTerminal, waitingVisibleAtMs } from "../job.js";
import { webhookIdOfEvent } from "../job-event-log.js";

export type MessageEffect =
  | { kind: "none" }
  | { kind: "delete" }
  | { kind: "visibleAt"; visibleAtMs: number }
  /** A receive: visible again at `visibleUntilMs`, receipt token = the lease token, receive count + 1. */
  | { kind: "lease"; visibleUntilMs: number; receiptToken: string }
  /** Moved to the dead-letter queue (visible there now, receive count reset). */
  | { kind: "deadLetter"; queueId: number; sourceQueueName: string };

export interface JobTransition extends JobChange {
  message: MessageEffect;
}

function unchanged(job: JobRecord): JobTransition {
  return { job, events: [], message: { kind: "none" } };
}

/** Fields that only mean something while running. */
function withoutRunState(job: JobRecord): JobRecord {
  return { ...job, leaseExpiresAtMs: undefined, deadlineAtMs: undefined };
}

export function finish(job: JobRecord, status: "succeeded" | "failed" | "canceled", nowMs: number, resultTtlSeconds: number): JobRecord {
  return {
    ...withoutRunState(job),
    status,
    availableAtMs: undefined,
    finishedAtMs: nowMs,
    updatedAtMs: nowMs,
    expiresAtMs: nowMs + resultTtlSeconds * 1000,
  };
}

function deadLetterEffect(policy: RetryPolicy): MessageEffect {
  return policy.deadLetterQueueId === undefined
    ? { kind: "delete" }
    : { kind: "deadLetter", queueId: policy.deadLetterQueueId, sourceQueueName: policy.deadLetterSourceQueueName ?? "" };
}

/** "Job … has already succeeded." / "… has already failed." / "… was canceled." */
function alreadyFinished(job: JobRecord): never {
  return fail("JobAlreadyFinished", `Job ${job.id} ${job.status === "canceled" ? "was canceled" : `has already ${job.status}`}.`);
}

/** A lease is live while the job runs under it, before it expires and before the attempt's deadline. */
export function requireLiveLease(job: JobRecord, leaseToken: string, nowMs: number): void {
  if (isTerminal(job.status)) alreadyFinished(job);
  if (job.leaseToken !== leaseToken) fail("LeaseMismatch", `Lease ${leaseToken} is not the current lease of job ${job.id}.`);
  if (job.status !== "running" || (job.leaseExpiresAtMs ?? 0) <= nowMs) {
    fail("LeaseExpired", `The lease on job ${job.id} has ended; it will run again elsewhere.`);
  }
  if (job.deadlineAtMs !== undefined && job.deadlineAtMs <= nowMs) {
    fail("LeaseExpired", `Job ${job.id}'s attempt ${job.attempt} exceeded its timeout of ${job.timeoutSeconds} s.`);
  }
}

/**
 * An attempt ended without success (the worker failed it, it timed out, or its lease expired):
 * canceled if a cancel was requested, queued again after a backoff if it may retry, else failed
 * with its message moved to the dead-letter queue.
 */
export function attemptFailed(
  job: JobRecord,
  p: RetryPolicy & { nowMs: number; error: JobError; retryable: boolean; retryAfterSeconds?: number; backoffApplies: boolean },
): JobTransition {
  const withError: JobRecord = { ...job, error: p.error };
  if (job.cancelRequested) {
    return { job: finish(withError, "canceled", p.nowMs, p.resultTtlSeconds), events: ["job.canceled"], message: { kind: "delete" } };
  }
  if (p.retryable && job.attempt < job.maxAttempts) {
    const delayMs = p.backoffApplies ? retryDelayMs({ attempt: job.attempt, backoff: p.backoff, random: p.random, retryAfterSeconds: p.retryAfterSeconds }) : 0;
    const availableAtMs = p.nowMs + delayMs;
    return {
      job: { ...withoutRunState(withError), status: "queued", availableAtMs, updatedAtMs: p.nowMs },
      events: ["job.retrying"],
      message: { kind: "visibleAt", visibleAtMs: availableAtMs },
    };
  }
  return { job: finish(withError, "failed", p.nowMs, p.resultTtlSeconds), events: ["job.failed"], message: deadLetterEffect(p) };
}

/**
 * A ready message of this job was taken by a lease. Finished jobs' messages are stale (deleted);
 * a failed job's message is back from the dead-letter queue (a redrive: it runs again with its
 * attempts starting over); a job whose last attempt's lease expired fails here if the expiry sweep
 * hasn't got to it yet.
 */
export function leaseTransition(
  job: JobRecord,
  p: RetryPolicy & { nowMs: number; leaseToken: string; leaseSeconds: number },
  messageSeq: number,
): JobTransition | { skip: true; message: MessageEffect } {
  if (job.status === "succeeded" || job.status === "canceled") return { skip: true, message: { kind: "delete" } };
  // Its parents aren't done: its message was made visible from outside (SQS); hidden again.
  if (job.status === "waiting") return { skip: true, message: { kind: "visibleAt", visibleAtMs: waitingVisibleAtMs } };
  let current: JobRecord = { ...job, messageSeq };
  if (current.status === "failed") {
    current = { ...current, status: "queued", attempt: 0, finishedAtMs: undefined, expiresAtMs: undefined };
  }
  const events: JobEventType[] = [];
  if (current.status === "running") {
    // Its lease expired (the message is visible again) and the sweep has not recorded that yet.
    const expired = attemptFailed(current, { ...p, error: leaseExpiredError(current), retryable: true, backoffApplies: false });
    if (expired.job.status !== "queued") return expired;
    current = expired.job;
    events.push(...expired.events);
  }
  const leaseExpiresAtMs = p.nowMs + p.leaseSeconds * 1000;
  return {
    job: {
      ...current,
      status: "running",
      attempt: current.attempt + 1,
      leaseToken: p.leaseToken,
      leaseSeconds: p.leaseSeconds,
      leaseExpiresAtMs,
      startedAtMs: p.nowMs,
      deadlineAtMs: current.timeoutSeconds === undefined ? undefined : p.nowMs + current.timeoutSeconds * 1000,
      availableAtMs: undefined,
      updatedAtMs: p.nowMs,
    },
    events: [...events, "job.started"],
    message: { kind: "lease", visibleUntilMs: leaseExpiresAtMs, receiptToken: p.leaseToken },
  };
}

export function leaseExpiredError(job: JobRecord): JobError {
  return { type: "LeaseExpired", message: `The lease on attempt ${job.attempt} expired: the worker stopped heartbeating or died.` };
}

export function heartbeatTransition(job: JobRecord, p: { leaseToken: string; nowMs: number; leaseSeconds?: number; progress?: number }): JobTransition {
  requireLiveLease(job, p.leaseToken, p.nowMs);
  const leaseSeconds = p.leaseSeconds ?? job.leaseSeconds ?? 30;
  const leaseExpiresAtMs = p.nowMs + leaseSeconds * 1000;
  const progressed = p.progress !== undefined && p.progress !== job.progress;
  return {
    job: { ...job, leaseSeconds, leaseExpiresAtMs, progress: p.progress ?? job.progress, updatedAtMs: p.nowMs },
    events: progressed ? ["job.progress"] : [],
    message: { kind: "visibleAt", visibleAtMs: leaseExpiresAtMs },
  };
}

// nowMs apart from `p`: callers pass an ack as it is, not a copy with nowMs added (newJobRecord says why).
export function completeTransition(job: JobRecord, p: { leaseToken: string; outputJson: string; resultTtlSeconds: number; outputAttachmentsJson?: string }, nowMs: number): JobTransition {
  requireLiveLease(job, p.leaseToken, nowMs);
  return {
    job: { ...finish(job, "succeeded", nowMs, p.resultTtlSeconds), outputJson: p.outputJson, outputAttachmentsJson: p.outputAttachmentsJson ?? job.outputAttachmentsJson },
    events: ["job.succeeded"],
    message: { kind: "delete" },
  };
}

export function failTransition(
  job: JobRecord,
  p: RetryPolicy & { leaseToken: string; error: JobError; retryable: boolean; retryAfterSeconds?: number },
  nowMs: number,
): JobTransition {
  requireLiveLease(job, p.leaseToken, nowMs);
  return attemptFailed(job, { ...p, nowMs, backoffApplies: true });
}

/**
 * The worker hands back a lease it never started (it is shutting down): the job is queued again,
 * leasable at once, and the attempt is given back — nothing ran, so nothing was tried. A job whose
 * cancel was requested meanwhile is canceled instead, as a failed attempt of it would be.
 */
export function releaseTransition(job: JobRecord, p: { leaseToken: string; nowMs: number; resultTtlSeconds: number }): JobTransition {
  requireLiveLease(job, p.leaseToken, p.nowMs);
  if (job.cancelRequested) {
    return { job: finish(job, "canceled", p.nowMs, p.resultTtlSeconds), events: ["job.canceled"], message: { kind: "delete" } };
  }
  const attempt = Math.max(0, job.attempt - 1);
  return {
    job: {
      ...withoutRunState(job),
      status: "queued",
      attempt,
      // The start of the handed-back attempt is no one's; an earlier attempt's is not known any more.
      startedAtMs: attempt === 0 ? undefined : job.startedAtMs,
      availableAtMs: p.nowMs,
      updatedAtMs: p.nowMs,
    },
    events: ["job.queued"],
    message: { kind: "visibleAt", visibleAtMs: p.nowMs },
  };
}

/**
 * A live job whose message was deleted under it — it passed its queue's retention period, or the
 * queue was purged through SQS: it can never be leased again, so it ends (failed, or canceled for a
 * purge, which is someone's decision to drop the backlog) rather than stay queued forever.
 */
export function messageLostTransition(job: JobRecord, p: { nowMs: number; resultTtlSeconds: number; reason: "expired" | "purged" }): JobTransition {
  const error: JobError =
    p.reason === "expired"
      ? { type: "MessageExpired", message: `The job's message outlived queue ${job.queueName}'s message retention period before the job finished.` }
      : { type: "QueuePurged", message: `Queue ${job.queueName} was purged before the job finished.` };
  const status = p.reason === "expired" ? "failed" : "canceled";
  // No message effect: the caller is deleting the message.
  return { job: { ...finish({ ...job, error }, status, p.nowMs, p.resultTtlSeconds), messageSeq: undefined }, events: [status === "failed" ? "job.failed" : "job.canceled"], message: { kind: "none" } };
}

/** Waiting or queued → canceled at once; running → cancel requested (the worker sees it on its next heartbeat). */
export function cancelTransition(job: JobRecord, p: { nowMs: number; resultTtlSeconds: number }): JobTransition {
  switch (job.status) {
    case "canceled":
      return unchanged(job);
    case "succeeded":
    case "failed":
      return alreadyFinished(job);
    case "waiting":
    case "queued":
      return { job: finish(job, "canceled", p.nowMs, p.resultTtlSeconds), events: ["job.canceled"], message: { kind: "delete" } };
    case "running":
      if (job.cancelRequested) return unchanged(job);
      return { job: { ...job, cancelRequested: true, updatedAtMs: p.nowMs }, events: ["job.cancel_requested"], message: { kind: "none" } };
  }
}

/**
 * An operator retries a failed or canceled job: queued again at once with its attempts starting
 * over, as a redrive from the dead-letter queue does; its last error stays until an attempt ends.
 * The store gives it a fresh message (JobStore.jobRetry), so no message effect is returned.
 */
export function retryTransition(job: JobRecord, p: { nowMs: number }): JobChange {
  if (job.status !== "failed" && job.status !== "canceled") {
    fail("JobNotRetryable", `Only a failed or canceled job can be retried; job ${job.id} is ${job.status}.`);
  }
  return {
    job: {
      ...job,
      status: "queued",
      attempt: 0,
      progress: undefined,
      cancelRequested: false,
      finishedAtMs: undefined,
      expiresAtMs: undefined,
      availableAtMs: p.nowMs,
      updatedAtMs: p.nowMs,
    },
    events: ["job.queued"],
  };
}

/** Why a running job's attempt is over without the worker saying so, if it is. */
export function expiryReason(job: JobRecord, nowMs: number): "timeout" | "leaseExpired" | undefined {
  if (job.status !== "running") return undefined;
  if (job.deadlineAtMs !== undefined && job.deadlineAtMs <= nowMs) return "timeout";
  if ((job.leaseExpiresAtMs ?? 0) <= nowMs) return "leaseExpired";
  return undefined;
}

/**
 * The sweep found a running job past its deadline (retried with backoff, like a failure) or past
 * its lease (leasable again at once: its message is already visible). Undefined: nothing to do.
 */
export function expiryTransition(job: JobRecord, p: RetryPolicy & { nowMs: number }): JobTransition | undefined {
  const reason = expiryReason(job, p.nowMs);
  if (reason === "timeout") {
    const error: JobError = { type: "Timeout", message: `Attempt ${job.attempt} exceeded the job's timeout of ${job.timeoutSeconds} s.` };
    return attemptFailed(job, { ...p, error, retryable: true, backoffApplies: true });
  }
  if (reason === "leaseExpired") return attemptFailed(job, { ...p, error: leaseExpiredError(job), retryable: true, backoffApplies: false });
  return undefined;
}

/** What an action by id (JobStore.jobTransitionMany) does to its job as the store's write read it; throws a refusal. */
export function actionTransition(job: JobRecord, action: JobAction, nowMs: number): JobTransition {
  switch (action.kind) {
    case "heartbeat":
      return heartbeatTransition(job, { ...action, nowMs });
    case "complete":
      return completeTransition(job, action, nowMs);
    case "fail":
      return failTransition(job, action, nowMs);
    case "release":
      return releaseTransition(job, { ...action, nowMs });
    case "cancel":
      return cancelTransition(job, { ...action, nowMs });
    case "expire":
      return expiryTransition(job, { ...action, nowMs }) ?? unchanged(job);
  }
}

/**
 * A message in a job queue without a job: sent through the SQS API, or redriven after its job was
 * pruned. It becomes a job (same id as the message), its input the body parsed as JSON, or the
 * body as a JSON string when it isn't JSON.
 */
export function jobFromMessage(p: {
  message: { messageId: string; body: string; priority: number; sentAtMs: number };
  queueId: number;
  queueName: string;
  /** The queue's account, when not the server's own. */
  account?: string;
  nowMs: number;
  maxAttempts: number;
  timeoutSeconds?: number;
}): Omit<JobRecord, "seq"> {
  return {
    id: p.message.messageId,
    queueId: p.queueId,
    queueName: p.queueName,
    account: p.account,
    status: "queued",
    inputJson: isJsonText(p.message.body) ? p.message.body : JSON.stringify(p.message.body),
    attempt: 0,
    maxAttempts: p.maxAttempts,
    priority: p.message.priority,
    createdAtMs: p.message.sentAtMs,
    updatedAtMs: p.nowMs,
    timeoutSeconds: p.timeoutSeconds,
    cancelRequested: false,
    availableAtMs: p.nowMs,
  };
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The events of a change that a job's webhook subscribed to. */
export function webhookEventsOf(job: JobRecord, events: readonly JobEventType[]): JobEventType[] {
  const wanted = job.webhook?.events;
  if (!wanted) return [];
  return events.filter((e) => (wanted as readonly string[]).includes(e));
}

/** A webhook delivery a logged event queues: the job as at the event, and its webhook-id (the event's: webhookIdOfEvent). */
export interface NewWebhookDelivery {
  job: JobRecord;
  event: JobEventType;
  id: string;
}

/** The deliveries logged changes queue: their subscribed events, each named by its log id (`eventIds`: one per event, in order). */
export function webhookDeliveriesOf(changes: ReadonlyArray<{ job: JobRecord; events: readonly JobEventType[] }>, eventIds: readonly number[]): NewWebhookDelivery[] {
  const out: NewWebhookDelivery[] = [];
  let k = 0;
  for (const { job, events } of changes) {
    const wanted = webhookEventsOf(job, events);
    for (const event of events) {
      const id = eventIds[k++]!;
      if (wanted.includes(event)) out.push({ job, event, id: webhookIdOfEvent(id) });
    }
  }
  return out;
}
