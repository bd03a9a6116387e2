/**
 * Per-account quotas (docs/security.md, "Quotas"): how many queues an account may have, how many
 * messages and bytes each of its queues may hold, and how many requests a second it may make. A
 * refused request changes nothing. Accounts are core's names for them ("" is the server's own).
 */
import type { QueueRecord } from "./queue.js";
import { fail } from "./errors.js";

export interface AccountQuotas {
  maxQueues?: number;
  maxMessagesPerQueue?: number;
  /** Bytes of message bodies (UTF-8) a queue may hold. */
  maxBytesPerQueue?: number;
  requestsPerSecond?: number;
  /** Bytes of the account's attachments (blobs uploaded and not yet deleted). */
  maxBlobBytes?: number;
}

export const quotaNames = ["maxQueues", "maxMessagesPerQueue", "maxBytesPerQueue", "requestsPerSecond", "maxBlobBytes"] as const;
export type QuotaName = (typeof quotaNames)[number];

/** Where core reads each account's quotas (reloaded with the credentials) and tells of refusals. */
export interface QuotaSource {
  of(account: string): AccountQuotas | undefined;
  refused?(account: string, quota: QuotaName): void;
}

/** Whether sends to this queue are checked against a stored-size quota (most accounts have none). */
export function storedQuotaOf(source: QuotaSource | undefined, queue: QueueRecord): AccountQuotas | undefined {
  const q = source?.of(queue.account);
  return q !== undefined && (q.maxMessagesPerQueue !== undefined || q.maxBytesPerQueue !== undefined) ? q : undefined;
}

/** Refuses (OverLimit) a send that would take the queue past its account's stored-size quota. */
export function checkStored(source: QuotaSource, quotas: AccountQuotas, queue: QueueRecord, held: { messages: number; bytes: number }, adding: { messages: number; bytes: number }): void {
  if (quotas.maxMessagesPerQueue !== undefined && held.messages + adding.messages > quotas.maxMessagesPerQueue) {
    source.refused?.(queue.account, "maxMessagesPerQueue");
    fail("OverLimit", `Queue ${queue.name} holds ${held.messages} messages; its account's quota is ${quotas.maxMessagesPerQueue} a queue. Receive and delete some, then send again.`);
  }
  if (quotas.maxBytesPerQueue !== undefined && held.bytes + adding.bytes > quotas.maxBytesPerQueue) {
    source.refused?.(queue.account, "maxBytesPerQueue");
    fail("OverLimit", `Queue ${queue.name} holds ${held.bytes} bytes of messages; its account's quota is ${quotas.maxBytesPerQueue} bytes a queue. Receive and delete some, then send again.`);
  }
}

/** Refuses (OverLimit) a queue the account has no room for. */
export function checkQueueCount(source: QuotaSource, account: string, maxQueues: number, count: number): void {
  if (count < maxQueues) return;
  source.refused?.(account, "maxQueues");
  fail("OverLimit", `The account has ${count} queues; its quota is ${maxQueues}. Delete a queue to make another.`);
}
