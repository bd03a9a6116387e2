/** A row of the move_tasks table (SQS message move tasks), as both stores read it, and core's record of it. */
import type { MoveTaskRecord, MoveTaskStatus } from "../../core/move-task-record.js";

export interface TaskRow {
  task_handle: string;
  account: string;
  source_queue: string;
  destination_queue: string | null;
  max_per_second: number | null;
  status: MoveTaskStatus;
  moved_count: number;
  to_move_count: number;
  failure_reason: string | null;
  started_at_ms: number;
  updated_at_ms: number;
}

export function toTask(row: TaskRow): MoveTaskRecord {
  return {
    taskHandle: row.task_handle,
    ...(row.account === "" ? {} : { account: row.account }),
    sourceQueueName: row.source_queue,
    destinationQueueName: row.destination_queue ?? undefined,
    maxMessagesPerSecond: row.max_per_second ?? undefined,
    status: row.status,
    movedCount: row.moved_count,
    toMoveCount: row.to_move_count,
    failureReason: row.failure_reason ?? undefined,
    startedAtMs: row.started_at_ms,
    updatedAtMs: row.updated_at_ms,
  };
}

/** The columns a new task's row is inserted with, in the order of moveTaskValues. */
export const moveTaskColumns = "task_handle, account, source_queue, destination_queue, max_per_second, status, moved_count, to_move_count, failure_reason, started_at_ms, updated_at_ms";

export function moveTaskValues(t: MoveTaskRecord): Array<string | number | null> {
  return [t.taskHandle, t.account ?? "", t.sourceQueueName, t.destinationQueueName ?? null, t.maxMessagesPerSecond ?? null, t.status, t.movedCount, t.toMoveCount, t.failureReason ?? null, t.startedAtMs, t.updatedAtMs];
}
