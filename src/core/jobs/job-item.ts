/**
 * A submit as the store takes it (JobCreateItem): the job record, its message and its
 * Idempotency-Key's claim — built the same way for a client's submit and a schedule's run.
 */
import type { QueueRecord } from "../queue.js";
import { jobMessage } from "./job-message.js";
import type { JobQueueSettings } from "../job-settings.js";
import type { IdempotencyClaim, JobCreateItem, NewJob } from "../job-store.js";
import { type SubmitInput, runAtMs } from "./job-validation.js";
import type { JobTrace, JobWebhook } from "../job.js";

export interface JobItemParams {
  queue: QueueRecord;
  settings: JobQueueSettings;
  /** The submit's options (its input is `inputJson`). */
  input: Omit<SubmitInput, "input">;
  inputJson: string;
  webhook: JobWebhook | undefined;
  id: string;
  nowMs: number;
  senderId: string;
  idempotency: IdempotencyClaim | undefined;
  /** The submit's W3C trace context, if it sent one. */
  trace?: JobTrace;
  /** The job's input attachments (JobRecord.attachmentsJson), attached already. */
  attachmentsJson?: string;
}

export function newJobItem(p: JobItemParams): JobCreateItem {
  const { queue, settings, input, nowMs } = p;
  const priority = input.priority ?? queue.config.defaultPriority;
  // A runAt already past runs now, as a zero delay would (the submit checked it is not too far ahead).
  const availableAtMs = input.runAt !== undefined ? Math.max(nowMs, runAtMs(input.runAt)) : nowMs + (input.delaySeconds ?? 0) * 1000;
  const job: NewJob = {
    id: p.id,
    queueId: queue.id,
    queueName: queue.name,
    account: queue.account === "" ? undefined : queue.account,
    status: "queued",
    inputJson: p.inputJson,
    attempt: 0,
    maxAttempts: input.maxAttempts ?? settings.maxAttempts,
    priority,
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
    idempotencyKey: p.idempotency?.key,
    metadataJson: input.metadata === undefined ? undefined : JSON.stringify(input.metadata),
    timeoutSeconds: input.timeoutSeconds ?? settings.timeoutSeconds,
    webhook: p.webhook,
    cancelRequested: false,
    availableAtMs,
    tenant: input.tenant,
    dependsOn: input.dependsOn,
    onParentFailure: input.dependsOn === undefined ? undefined : (input.onParentFailure ?? "fail"),
    // An empty set requires nothing: stored as none, so the job takes the unlabelled path.
    requires: input.requires === undefined || Object.keys(input.requires).length === 0 ? undefined : input.requires,
    trace: p.trace,
    attachmentsJson: p.attachmentsJson,
  };
  const message = jobMessage({ queue, jobId: p.id, inputJson: p.inputJson, priority, availableAtMs, senderId: p.senderId });
  return { job, message, idempotency: p.idempotency };
}
