/**
 * FIFO and message-group rules at send and receive time, with SQS's wording. The store does the
 * atomic parts (dedup check + insert, group-ordered leasing); this file decides what is valid and
 * which deduplication id a message has.
 */
import { createHash } from "node:crypto";
import { fail } from "./errors.js";
import { limits } from "./limits.js";
import type { QueueConfig } from "./queue.js";
import type { SendDedup } from "./store.js";

/** SQS: alphanumerics and punctuation `!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~`, 1–128 characters. */
const fifoIdPattern = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]+$/;

function checkFifoId(name: string, value: string): void {
  if (value.length < 1 || value.length > limits.fifoIdMaxLength || !fifoIdPattern.test(value)) {
    fail("InvalidParameterValue", `Value ${value} for parameter ${name} is invalid. Reason: ${name} can only include alphanumeric and punctuation characters. 1 to ${limits.fifoIdMaxLength} in length.`);
  }
}

export interface GroupFields {
  groupId?: string;
  deduplicationId?: string;
}

/** SQS's words for a FIFO send without a group, or without a deduplication id it can't derive. */
const missingGroupIdMessage = "The request must contain the parameter MessageGroupId.";
const missingDeduplicationIdMessage = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly";

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
  if (input.groupId !== undefined) checkFifoId("MessageGroupId", input.groupId);
  if (!config.fifoQueue) {
    if (input.deduplicationId !== undefined) {
      fail("InvalidParameterValue", "The request include parameter MessageDeduplicationId that is not valid for this queue type");
    }
    return { groupId: input.groupId };
  }
  if (input.groupId === undefined) fail("MissingParameter", missingGroupIdMessage);
  // SQS takes delays only at the queue level on FIFO queues; an explicit 0 changes nothing.
  if (input.delaySeconds !== undefined && input.delaySeconds !== 0) {
    fail("InvalidParameterValue", `Value ${input.delaySeconds} for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.`);
  }
  let deduplicationId = input.deduplicationId;
  if (deduplicationId !== undefined) checkFifoId("MessageDeduplicationId", deduplicationId);
  else if (config.contentBasedDeduplication) deduplicationId = contentDeduplicationId(input.body);
  else fail("InvalidParameterValue", missingDeduplicationIdMessage);
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
    if (entry.groupId === undefined) fail("InvalidParameterValue", missingGroupIdMessage);
    if (entry.deduplicationId === undefined && !config.contentBasedDeduplication) fail("InvalidParameterValue", missingDeduplicationIdMessage);
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
  checkFifoId("ReceiveRequestAttemptId", value);
}
