/**
 * FIFO and message-group rules at send and receive time. The store does the atomic parts (dedup
 * check + insert, group-ordered leasing); this file decides what is valid and which deduplication
 * id a message has. Refusals carry a subject: the SQS layer words them as SQS does.
 */
import { createHash } from "node:crypto";
import { type ErrorSubject, fail } from "./errors.js";
import { limits } from "./limits.js";
import type { QueueConfig } from "./queue.js";
import type { SendDedup } from "./store.js";

/** As SQS: alphanumerics and punctuation `!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~`, 1–128 characters. */
const fifoIdPattern = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]+$/;

type FifoIdField = Extract<ErrorSubject, { kind: "fifoId" }>["field"];

const fifoIdLabels: Readonly<Record<FifoIdField, string>> = {
  groupId: "message group id",
  deduplicationId: "message deduplication id",
  receiveAttemptId: "receive request attempt id",
};

function checkFifoId(field: FifoIdField, value: string): void {
  if (value.length < 1 || value.length > limits.fifoIdMaxLength || !fifoIdPattern.test(value)) {
    fail("InvalidParameterValue", `The ${fifoIdLabels[field]} ${JSON.stringify(value)} is invalid: 1 to ${limits.fifoIdMaxLength} letters, digits or punctuation characters.`, {
      kind: "fifoId",
      field,
      value,
    });
  }
}

export interface GroupFields {
  groupId?: string;
  deduplicationId?: string;
}

/** A FIFO send without a group, or without a deduplication id the queue can't derive. */
function missingGroupId(code: "MissingParameter" | "InvalidParameterValue"): never {
  fail(code, "A message to a FIFO queue needs a message group id.", { kind: "fifoGroupIdMissing" });
}

function missingDeduplicationId(): never {
  fail("InvalidParameterValue", "A message to a FIFO queue without content-based deduplication needs a message deduplication id.", { kind: "fifoDeduplicationIdMissing" });
}

export interface GroupInput extends GroupFields {
  body: string;
  delaySeconds?: number;
}

/**
 * Validates MessageGroupId / MessageDeduplicationId / DelaySeconds for the queue's type and returns
 * the group and deduplication id to store. On a FIFO queue with ContentBasedDeduplication and no
 * explicit id, the id is the SHA-256 of the body (hex), which SQS also returns as
 * MessageDeduplicationId. On a standard queue a group id turns on fairness (docs/fair-queues.md).
 */
export function groupFieldsFor(config: QueueConfig, input: GroupInput): GroupFields {
  if (input.groupId !== undefined) checkFifoId("groupId", input.groupId);
  if (!config.fifoQueue) {
    if (input.deduplicationId !== undefined) {
      fail("InvalidParameterValue", "A message deduplication id is taken only by FIFO queues.", { kind: "deduplicationIdOnStandardQueue" });
    }
    return { groupId: input.groupId };
  }
  if (input.groupId === undefined) missingGroupId("MissingParameter");
  // SQS takes delays only at the queue level on FIFO queues; an explicit 0 changes nothing.
  if (input.delaySeconds !== undefined && input.delaySeconds !== 0) {
    fail("InvalidParameterValue", `A FIFO queue takes no delay per message (the queue's own delay applies), got ${input.delaySeconds} seconds.`, {
      kind: "fifoMessageDelay",
      value: input.delaySeconds,
    });
  }
  let deduplicationId = input.deduplicationId;
  if (deduplicationId !== undefined) checkFifoId("deduplicationId", deduplicationId);
  else if (config.contentBasedDeduplication) deduplicationId = contentDeduplicationId(input.body);
  else missingDeduplicationId();
  return { groupId: input.groupId, deduplicationId };
}

/**
 * SendMessageBatch on a FIFO queue: an entry without MessageGroupId, or without
 * MessageDeduplicationId where the queue has no ContentBasedDeduplication, fails the whole call
 * (InvalidParameterValue, nothing sent) — not the entry alone, and not with SendMessage's
 * MissingParameter: SQS's recorded answers (docs/sqs-compatibility.md). Entries are checked in
 * request order. Every other fault of an entry still fails that entry alone (groupFieldsFor).
 */
export function checkFifoBatch(config: QueueConfig, entries: readonly GroupFields[]): void {
  if (!config.fifoQueue) return;
  for (const entry of entries) {
    if (entry.groupId === undefined) missingGroupId("InvalidParameterValue");
    if (entry.deduplicationId === undefined && !config.contentBasedDeduplication) missingDeduplicationId();
  }
}

export function contentDeduplicationId(body: string): string {
  return createHash("sha256").update(body, "utf8").digest("hex");
}

/** The dedup parameters of a send to this queue, or undefined for standard queues. */
export function sendDedupFor(config: QueueConfig, nowMs: number): SendDedup | undefined {
  if (!config.fifoQueue) return undefined;
  return { scope: config.deduplicationScope, nowMs, expiresAtMs: nowMs + limits.dedupWindowMs };
}

/**
 * SQS sequence numbers are large decimal strings, increasing per group (Sluice: per queue, which
 * implies per group). The store's seq is strictly increasing; zero-padded to 20 digits so that
 * string order equals numeric order, as clients sometimes compare them as strings.
 */
export function formatSequenceNumber(seq: number): string {
  return String(seq).padStart(20, "0");
}

/** Checks a ReceiveRequestAttemptId (FIFO only; standard queues ignore it, as SQS does). */
export function checkReceiveRequestAttemptId(value: string): void {
  checkFifoId("receiveAttemptId", value);
}
