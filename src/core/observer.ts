/**
 * What core tells the server's logs and metrics, after the write it reports committed. Every
 * method is optional; core calls them synchronously and ignores nothing they throw, so an
 * observer must be cheap and must not throw (sends and receives call it on the hot path).
 */
import type { MoveTaskRecord } from "./move-task-record.js";
import type { QueueRecord } from "./queue.js";

/** Which queue traffic was on: two accounts may each have a queue of one name ("" is the server's own account). */
export type QueueRef = Pick<QueueRecord, "id" | "account" | "name">;

export interface QueueObserver {
  /** Messages enqueued by a send (FIFO duplicates, acknowledged but not enqueued, excluded). */
  messagesSent?(queue: QueueRef, count: number): void;
  messagesReceived?(queue: QueueRef, count: number): void;
  /** Messages a delete removed (stale receipt handles remove nothing). */
  messagesDeleted?(queue: QueueRef, count: number): void;
  /** Messages a receive moved to the queue's dead-letter queue (`queue` is the source). */
  messagesDeadLettered?(queue: QueueRef, count: number): void;
  moveTaskStarted?(task: MoveTaskRecord): void;
  /** The task as it ended: COMPLETED, CANCELLED or FAILED. */
  moveTaskFinished?(task: MoveTaskRecord): void;
}
