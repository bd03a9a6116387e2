/**
 * Message move tasks in PostgreSQL: the task rows, and messageMove, which moves one batch and
 * counts it on its task in the same transaction (a crash never loses or double-counts progress).
 * Two nodes running the same task take disjoint messages (SKIP LOCKED); the task row's lock
 * makes their progress updates queue up rather than race.
 */
import { type MessageMoveParams, type MessageMoveResult, type MoveTaskRecord, type MoveTaskStatus, moveRefused, planMoveBatch } from "../../core/move-task-record.js";
import type { Db, Queryable } from "./db.js";
import { lockGroups, settleGroups } from "./message-insert.js";
import { reenqueue } from "./receive.js";
import { type TaskRow, moveTaskColumns, moveTaskValues, toTask } from "../codecs/move-task-row.js";

export async function moveTaskCreate(db: Db, task: MoveTaskRecord): Promise<{ created: boolean }> {
  // The partial unique index allows one active task per source, whichever node asks.
  const { rowCount } = await db.query(
    `INSERT INTO move_tasks (${moveTaskColumns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (account, source_queue) WHERE status IN ('RUNNING', 'CANCELLING') DO NOTHING`,
    moveTaskValues(task),
  );
  return { created: (rowCount ?? 0) > 0 };
}

export async function moveTaskGet(db: Db, taskHandle: string): Promise<MoveTaskRecord | undefined> {
  const { rows } = await db.query<TaskRow>("SELECT * FROM move_tasks WHERE task_handle = $1", [taskHandle]);
  return rows[0] ? toTask(rows[0]) : undefined;
}

export async function moveTaskList(db: Db, p: { account?: string; sourceQueueName?: string; activeOnly?: boolean; limit: number }): Promise<MoveTaskRecord[]> {
  // A source is named within its account; without one, every account's tasks.
  const { rows } = await db.query<TaskRow>(
    `SELECT * FROM move_tasks WHERE ($1::text IS NULL OR (account = $4 AND source_queue = $1)) AND (NOT $2 OR status IN ('RUNNING', 'CANCELLING'))
     ORDER BY id DESC LIMIT $3`,
    [p.sourceQueueName ?? null, p.activeOnly === true, p.limit, p.account ?? ""],
  );
  return rows.map(toTask);
}

export async function moveTaskUpdate(db: Db, p: { taskHandle: string; status: MoveTaskStatus; failureReason?: string; fromStatuses: readonly MoveTaskStatus[]; nowMs: number }): Promise<boolean> {
  const { rowCount } = await db.query(
    "UPDATE move_tasks SET status = $1, failure_reason = coalesce($2, failure_reason), updated_at_ms = $3 WHERE task_handle = $4 AND status = ANY ($5::text[])",
    [p.status, p.failureReason ?? null, p.nowMs, p.taskHandle, [...p.fromStatuses]],
  );
  return (rowCount ?? 0) > 0;
}

/** Moves one batch (see Store.messageMove). */
export async function messageMove(db: Db, p: MessageMoveParams): Promise<MessageMoveResult> {
  const touched = new Set<string>();
  const result = await db.transaction((tx) => moveBatch(tx, p, touched));
  // Source groups that lost messages may be empty now.
  if (touched.size > 0) await settleGroups(db, p.sourceQueueId, touched);
  return result;
}

async function moveBatch(tx: Queryable, p: MessageMoveParams, touched: Set<string>): Promise<MessageMoveResult> {
  touched.clear();
  if (p.taskHandle !== undefined) {
    const { rows } = await tx.query<{ status: string }>("SELECT status FROM move_tasks WHERE task_handle = $1 FOR UPDATE", [p.taskHandle]);
    if (rows[0]?.status !== "RUNNING") return moveRefused("taskNotRunning");
  }
  // Key-share locks: neither queue can be deleted until this batch is written.
  const { rows: source } = await tx.query<{ config: string }>("SELECT config FROM queues WHERE id = $1 FOR KEY SHARE", [p.sourceQueueId]);
  if (!source[0]) return moveRefused("sourceGone");
  if (p.destinationQueueId !== undefined && ((await tx.query("SELECT 1 FROM queues WHERE id = $1 FOR KEY SHARE", [p.destinationQueueId])).rowCount ?? 0) === 0) {
    return moveRefused("destinationGone");
  }
  const fifo = (JSON.parse(source[0].config) as { fifoQueue?: boolean }).fifoQueue === true;
  const { rows } = await tx.query<{ seq: number; deadLetterSource: string | null; group_id: string | null }>(
    `SELECT seq, dead_letter_source AS "deadLetterSource", group_id FROM messages WHERE queue_id = $1 AND visible_at_ms <= $2 AND sent_at_ms >= $3
     ORDER BY visible_at_ms, seq LIMIT $4 FOR UPDATE SKIP LOCKED`,
    [p.sourceQueueId, p.nowMs, p.minSentAtMs, p.max],
  );
  // The dead-letter sources named, in the dead-letter queue's own account (RedrivePolicy is same-account).
  const names = p.destinationQueueId === undefined ? [...new Set(rows.flatMap((r) => (r.deadLetterSource === null ? [] : [r.deadLetterSource])))] : [];
  const found = names.length === 0 ? [] : (await tx.query<{ id: number; name: string }>(
    "SELECT id, name FROM queues WHERE account = (SELECT account FROM queues WHERE id = $1) AND name = ANY ($2::text[]) ORDER BY id FOR KEY SHARE",
    [p.sourceQueueId, names],
  )).rows;
  const idByName = new Map(found.map((q) => [q.name, q.id]));
  const { result, moves } = planMoveBatch(rows, p, (name) => idByName.get(name));
  for (const [destination, batch] of moves) {
    const seqs = batch.map((r) => r.seq);
    const groups = batch.flatMap((r) => (r.group_id === null ? [] : [r.group_id]));
    for (const g of groups) touched.add(g);
    await lockGroups(tx, destination, groups);
    // A FIFO redrive is a new enqueue at the back of its group; a standard message moves in place.
    if (fifo) await reenqueue(tx, seqs, { queueId: destination, nowMs: p.nowMs, dedupIdFromMessageId: false });
    else {
      await tx.query(
        `UPDATE messages SET queue_id = $1, visible_at_ms = $2, sent_at_ms = $2, receive_count = 0, first_received_at_ms = NULL, received_at_ms = NULL,
           receipt_token = NULL, dead_letter_source = NULL WHERE seq = ANY ($3::bigint[])`,
        [destination, p.nowMs, seqs],
      );
    }
  }
  if (p.taskHandle !== undefined && result.moved > 0) {
    await tx.query("UPDATE move_tasks SET moved_count = moved_count + $1, updated_at_ms = $2 WHERE task_handle = $3", [result.moved, p.nowMs, p.taskHandle]);
  }
  return result;
}
