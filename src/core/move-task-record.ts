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

/** Store.messageMove's params: one batch of a task (or of a redrive without one). */
export interface MessageMoveParams {
  sourceQueueId: number;
  destinationQueueId?: number;
  max: number;
  nowMs: number;
  minSentAtMs: number;
  taskHandle?: string;
}

/** A batch that moved nothing for `reason`. */
export function moveRefused(reason?: "sourceGone" | "destinationGone" | "taskNotRunning"): MessageMoveResult {
  const result: MessageMoveResult = { moved: 0, movedByQueueId: {}, sourceUnresolved: false, sourceGone: false, destinationGone: false, taskNotRunning: false };
  if (reason !== undefined) result[reason] = true;
  return result;
}

/**
 * Where each message of a batch goes, by destination in batch order: the task's destination, or
 * without one the queue it was dead-lettered from (`idOf` a name, read once each). The batch
 * stops before the first message with neither, or whose source is the queue itself.
 */
export function planMoveBatch<M extends { deadLetterSource: string | null }>(
  messages: readonly M[],
  p: Pick<MessageMoveParams, "sourceQueueId" | "destinationQueueId">,
  idOf: (name: string) => number | undefined,
): { result: MessageMoveResult; moves: Map<number, M[]> } {
  const result = moveRefused();
  const moves = new Map<number, M[]>();
  const byName = new Map<string, number | undefined>();
  for (const m of messages) {
    let destination = p.destinationQueueId;
    if (destination === undefined && m.deadLetterSource !== null) {
      if (!byName.has(m.deadLetterSource)) byName.set(m.deadLetterSource, idOf(m.deadLetterSource));
      destination = byName.get(m.deadLetterSource);
    }
    if (destination === undefined || destination === p.sourceQueueId) {
      result.sourceUnresolved = true;
      break;
    }
    const batch = moves.get(destination);
    if (batch) batch.push(m);
    else moves.set(destination, [m]);
    result.moved++;
    result.movedByQueueId[destination] = (result.movedByQueueId[destination] ?? 0) + 1;
  }
  return { result, moves };
}
