/**
 * Moving a FIFO message to another queue as a new enqueue there: a new row (so a new seq, hence
 * a new SequenceNumber and a place at the back of its group), sent and visible now, never
 * received. SQS does this for FIFO dead-lettering and redrive; moving the row in place kept its
 * old seq, which put it ahead of messages that reached the queue before it — out of order, and,
 * ten or more ahead of an in-flight message, past the receive's group probe (receive.ts), so a
 * locked group was delivered from. Standard queues keep moving rows in place: a job's row points
 * at its message by seq, and job queues are standard.
 */
import type Database from "better-sqlite3";
import type { Reenqueue } from "../codecs/message-row.js";
import { type KeptCounts, keptBytesSql } from "./kept-counts.js";

/** What the message keeps; receive state starts afresh (column defaults). */
const keptColumns = "message_id, body, body_bytes, attributes, system_attributes, body_md5, attributes_md5, system_attributes_md5, priority, group_id, sender_id";

/** Returns a function that re-enqueues message `seq` (inside a write) and returns its new seq. */
export function prepareReenqueue(db: Database.Database, counts: KeptCounts): (seq: number, to: Reenqueue) => number {
  const bytesOf = db.prepare<[number], number>(`SELECT ${keptBytesSql} FROM messages WHERE seq = ?`).pluck();
  const insert = db.prepare<[number, string | null, number, number, number, number]>(
    `INSERT INTO messages (${keptColumns}, dedup_id, dead_letter_source, queue_id, visible_at_ms, sent_at_ms)
     SELECT ${keptColumns}, CASE ? WHEN 1 THEN message_id ELSE dedup_id END, ?, ?, ?, ? FROM messages WHERE seq = ?`,
  );
  return (seq, to) => {
    const bytes = bytesOf.get(seq) ?? 0;
    const info = insert.run(to.dedupIdFromMessageId ? 1 : 0, to.deadLetterSource ?? null, to.queueId, to.nowMs, to.nowMs, seq);
    counts.added(to.queueId, info.changes, bytes);
    counts.deleteSeqs([seq]);
    return Number(info.lastInsertRowid);
  };
}
