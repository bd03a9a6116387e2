/**
 * Whether a queue still exists, asked inside a write that puts messages into it. Callers read the
 * queue before their write's turn, and a DeleteQueue may have committed since (or run earlier in
 * the same group commit). messages.queue_id has no foreign key, so a message written or moved into
 * a deleted queue would be kept for a queue that is gone, seen by nobody. One primary-key seek.
 */
import type Database from "better-sqlite3";

export function prepareQueueExists(db: Database.Database): (queueId: number) => boolean {
  const statement = db.prepare<[number], number>("SELECT 1 FROM queues WHERE id = ?").pluck();
  return (queueId) => statement.get(queueId) !== undefined;
}
