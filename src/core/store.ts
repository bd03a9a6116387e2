/**
 * The one narrow interface every store implements (river style: noun-first names, one params
 * object per method). Decisions live in core; a store only performs atomic reads and writes.
 * Time is always passed in (`nowMs`), never read by a store.
 * Every store runs the same conformance suite: src/stores/testkit.
 */
import type { NewMessage, StoredMessage } from "./message.js";
import type { QueueConfig, QueueRecord } from "./queue.js";

export interface QueueStats {
  /** Ready to be received now. */
  visible: number;
  /** Received and not yet deleted or returned. */
  inFlight: number;
  /** Sent with a delay that has not passed yet. */
  delayed: number;
  oldestVisibleSentAtMs?: number;
}

export interface ReceiptRef {
  seq: number;
  token: string;
}

export type VisibilityChangeResult = "changed" | "notFound" | "notInFlight";

export interface Store {
  /** Creates the queue, or returns the existing one unchanged (`created: false`). */
  queueCreate(p: { name: string; config: QueueConfig; tags: Record<string, string>; nowMs: number }): Promise<{ queue: QueueRecord; created: boolean }>;
  queueGet(p: { name: string }): Promise<QueueRecord | undefined>;
  /** Queues in name order, after `afterName` when given. */
  queueList(p: { prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]>;
  queueUpdate(p: { id: number; config?: QueueConfig; tags?: Record<string, string>; purgedAtMs?: number; nowMs: number }): Promise<void>;
  /** Deletes the queue and its messages, and remembers when (for QueueDeletedRecently). */
  queueDelete(p: { id: number; nowMs: number }): Promise<void>;
  /** When a queue of this name was last deleted, if ever. */
  queueDeletedAt(p: { name: string }): Promise<number | undefined>;
  queueStats(p: { queueId: number; nowMs: number; minSentAtMs: number }): Promise<QueueStats>;

  /** Enqueues messages atomically; returns them with store-assigned `seq`. */
  messageSend(p: { queueId: number; messages: NewMessage[] }): Promise<StoredMessage[]>;
  /**
   * Leases up to `max` visible messages (priority high→low, then oldest first), atomically setting
   * their visibility to `visibleUntilMs`, bumping receiveCount and setting `receiptToken` (fresh
   * for every receive; with the seq it makes each receipt unique). Messages sent before
   * `minSentAtMs` are past retention and are never returned.
   */
  messageReceive(p: { queueId: number; max: number; nowMs: number; visibleUntilMs: number; minSentAtMs: number; receiptToken: string }): Promise<StoredMessage[]>;
  /** Deletes by receipt; a receipt whose token no longer matches deletes nothing (false). */
  messageDelete(p: { queueId: number; receipts: ReceiptRef[] }): Promise<boolean[]>;
  messageChangeVisibility(p: { queueId: number; nowMs: number; entries: Array<ReceiptRef & { visibleAtMs: number }> }): Promise<VisibilityChangeResult[]>;
  /** The earliest time after `nowMs` at which a message of this queue becomes visible. */
  messageNextVisibleAt(p: { queueId: number; nowMs: number }): Promise<number | undefined>;
  messagePurge(p: { queueId: number }): Promise<number>;
  /** Deletes messages past retention; returns how many. */
  messageExpire(p: { queueId: number; minSentAtMs: number }): Promise<number>;

  close(): Promise<void>;
}
