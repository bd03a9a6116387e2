/** The persisted state of a message move task (DLQ redrive), as every store keeps it. */

/** SQS's task statuses; RUNNING and CANCELLING are "active" (at most one per source queue). */
export type MoveTaskStatus = "RUNNING" | "COMPLETED" | "CANCELLING" | "CANCELLED" | "FAILED";

export const activeMoveTaskStatuses: readonly MoveTaskStatus[] = ["RUNNING", "CANCELLING"];

export interface MoveTaskRecord {
  /** Opaque, unique; what CancelMessageMoveTask takes. */
  taskHandle: string;
  /** The account whose queues the task moves between (QueueRecord.account); absent: the server's own. */
  account?: string;
  sourceQueueName: string;
  /** Absent: each message goes back to the queue it was dead-lettered from. */
  destinationQueueName?: string;
  maxMessagesPerSecond?: number;
  status: MoveTaskStatus;
  movedCount: number;
  /** The source's visible messages when the task started (SQS calls it approximate). */
  toMoveCount: number;
  failureReason?: string;
  startedAtMs: number;
  updatedAtMs: number;
}

export interface MessageMoveResult {
  moved: number;
  /** Messages moved per destination queue id (to wake that queue's long polls). */
  movedByQueueId: Record<number, number>;
  /** A message's original source queue is unknown or gone: the batch stopped before it. */
  sourceUnresolved: boolean;
  /** The source queue (the task's dead-letter queue) was deleted (after the caller read it): nothing was moved. */
  sourceGone: boolean;
  /** The destination queue was deleted (after the caller read it): nothing was moved. */
  destinationGone: boolean;
  /** The task was no longer RUNNING (cancelled): nothing was moved. */
  taskNotRunning: boolean;
}
