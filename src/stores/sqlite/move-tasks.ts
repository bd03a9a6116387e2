/**
 * Message move tasks in SQLite: the task rows, and messageMove, which moves one batch and counts
 * it on its task in the same write (so a crash never loses or double-counts progress).
 */
import type Database from "better-sqlite3";
import { marks } from "./sized-statements.js";
import { type MessageMoveParams, type MessageMoveResult, type MoveTaskRecord, type MoveTaskStatus, moveRefused, planMoveBatch } from "../../core/move-task-record.js";
import { type TaskRow, moveTaskColumns, moveTaskValues, toTask } from "../codecs/move-task-row.js";
import { boundLimit } from "./bound-limit.js";
import { prepareQueueExists } from "./queue-exists.js";
import type { KeptCounts } from "./kept-counts.js";
import { prepareReenqueue } from "./reenqueue.js";
import { mergeVisible, visibleParts } from "./visible-order.js";

export class SqliteMoveTasks {
  private readonly sql;
  private readonly reenqueue: ReturnType<typeof prepareReenqueue>;

  constructor(
    private readonly db: Database.Database,
    counts: KeptCounts,
  ) {
    this.reenqueue = prepareReenqueue(db, counts);
    this.sql = {
      insert: db.prepare(`INSERT INTO move_tasks (${moveTaskColumns}) VALUES (${marks(11)})`),
      activeForSource: db.prepare<[string, string], number>("SELECT 1 FROM move_tasks WHERE account = ? AND source_queue = ? AND status IN ('RUNNING', 'CANCELLING')").pluck(),
      get: db.prepare<[string], TaskRow>("SELECT * FROM move_tasks WHERE task_handle = ?"),
      status: db.prepare<[string], MoveTaskStatus>("SELECT status FROM move_tasks WHERE task_handle = ?").pluck(),
      bySource: db.prepare<[string, string, number], TaskRow>(`SELECT * FROM move_tasks WHERE account = ? AND source_queue = ? ORDER BY id DESC ${boundLimit()}`),
      active: db.prepare<[number], TaskRow>(`SELECT * FROM move_tasks WHERE status IN ('RUNNING', 'CANCELLING') ORDER BY id DESC ${boundLimit()}`),
      all: db.prepare<[number], TaskRow>(`SELECT * FROM move_tasks ORDER BY id DESC ${boundLimit()}`),
      progress: db.prepare<[number, number, string]>("UPDATE move_tasks SET moved_count = moved_count + ?, updated_at_ms = ? WHERE task_handle = ?"),
      // The visible messages of the source, oldest first: one statement per visibility part.
      movable: visibleParts.map((part) =>
        db.prepare<[number, number, number, number], { seq: number; visible_at_ms: number; deadLetterSource: string | null }>(
          `SELECT seq, visible_at_ms, dead_letter_source AS deadLetterSource FROM ${part.from}
           WHERE queue_id = ? AND ${part.where} AND visible_at_ms <= ? AND sent_at_ms >= ? ORDER BY visible_at_ms, seq ${boundLimit()}`,
        ),
      ),
      // The dead-letter source is in the dead-letter queue's own account (RedrivePolicy is same-account).
      queueIdByName: db.prepare<[number, string], number>("SELECT id FROM queues WHERE account = (SELECT account FROM queues WHERE id = ?) AND name = ?").pluck(),
      // A move is a new enqueue on the destination: visible and sent now, never received.
      move: db.prepare<[number, number, number, number]>(
        `UPDATE messages SET queue_id = ?, visible_at_ms = ?, sent_at_ms = ?, receive_count = 0, first_received_at_ms = NULL,
           receipt_token = NULL, dead_letter_source = NULL WHERE seq = ?`,
      ),
      isFifo: db.prepare<[number], number | null>("SELECT json_extract(config, '$.fifoQueue') FROM queues WHERE id = ?").pluck(),
      queueExists: prepareQueueExists(db),
    };
  }

  /** Inside a write: records the task unless its source already has an active one. */
  create(task: MoveTaskRecord): { created: boolean } {
    if (this.sql.activeForSource.get(task.account ?? "", task.sourceQueueName) !== undefined) return { created: false };
    this.sql.insert.run(moveTaskValues(task));
    return { created: true };
  }

  get(taskHandle: string): MoveTaskRecord | undefined {
    const row = this.sql.get.get(taskHandle);
    return row ? toTask(row) : undefined;
  }

  list(p: { account?: string; sourceQueueName?: string; activeOnly?: boolean; limit: number }): MoveTaskRecord[] {
    const limit = Math.min(p.limit, Number.MAX_SAFE_INTEGER);
    let rows: TaskRow[];
    if (p.sourceQueueName !== undefined) {
      rows = this.sql.bySource.all(p.account ?? "", p.sourceQueueName, limit);
      if (p.activeOnly) rows = rows.filter((r) => r.status === "RUNNING" || r.status === "CANCELLING");
    } else {
      rows = p.activeOnly ? this.sql.active.all(limit) : this.sql.all.all(limit);
    }
    return rows.map(toTask);
  }

  /** Inside a write: a conditional status change. */
  update(p: { taskHandle: string; status: MoveTaskStatus; failureReason?: string; fromStatuses: readonly MoveTaskStatus[]; nowMs: number }): boolean {
    const info = this.db
      .prepare(`UPDATE move_tasks SET status = ?, failure_reason = coalesce(?, failure_reason), updated_at_ms = ? WHERE task_handle = ? AND status IN (${marks(p.fromStatuses.length)})`)
      .run(p.status, p.failureReason ?? null, p.nowMs, p.taskHandle, ...p.fromStatuses);
    return info.changes > 0;
  }

  /** Inside a write: moves one batch (see Store.messageMove). */
  move(p: MessageMoveParams): MessageMoveResult {
    if (p.taskHandle !== undefined && this.sql.status.get(p.taskHandle) !== "RUNNING") return moveRefused("taskNotRunning");
    // The source's row (read for its type below) is gone if it was deleted since the runner read
    // it: its messages went with it, so an empty batch must not pass for "all moved".
    const sourceFifo = this.sql.isFifo.get(p.sourceQueueId);
    if (sourceFifo === undefined) return moveRefused("sourceGone");
    // The runner read the destination before this write (queue-exists.ts): one deleted since
    // must get nothing — a standard message would be orphaned, a FIFO one fail the batch on
    // message_groups' foreign key. One seek per batch. (Without a destination, each message's
    // source is looked up by name, in this write: a deleted one is sourceUnresolved.)
    if (p.destinationQueueId !== undefined && !this.sql.queueExists(p.destinationQueueId)) return moveRefused("destinationGone");
    const visible = this.sql.movable.map((movable) => movable.all(p.sourceQueueId, p.nowMs, p.minSentAtMs, p.max));
    const { result, moves } = planMoveBatch(mergeVisible(visible, p.max), p, (name) => this.sql.queueIdByName.get(p.sourceQueueId, name));
    // A FIFO DLQ only ever redrives to FIFO queues (same type, checked when the task started), and
    // a FIFO redrive is a new enqueue at the back of its group, as SQS interleaves it with new sends.
    for (const [destination, rows] of moves) {
      for (const row of rows) {
        if (sourceFifo === 1) this.reenqueue(row.seq, { queueId: destination, nowMs: p.nowMs, dedupIdFromMessageId: false });
        else this.sql.move.run(destination, p.nowMs, p.nowMs, row.seq);
      }
    }
    if (p.taskHandle !== undefined && result.moved > 0) this.sql.progress.run(result.moved, p.nowMs, p.taskHandle);
    return result;
  }
}
