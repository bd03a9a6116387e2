/**
 * Each queue's kept message count and bytes (migrations 015 and 033: queueStats' total,
 * queueHeld's quotas), moved by the store's writes that add and delete messages, in the same
 * transaction, one UPDATE per statement. Triggers did it per row, and their octet_length() made
 * SQLite copy every page each INSERT and DELETE touched into a statement journal. Moves between
 * queues (rare) are still counted by migration 015's trigger.
 */
import type Database from "better-sqlite3";
import { marks, sizedStatements } from "./sized-statements.js";

/**
 * What a message row counts for in its queue's bytes: its body's, or, when its body is kept with
 * its job's input (message-insert.ts: classed), the size written beside it.
 */
export const keptBytesSql = "coalesce(body_bytes, octet_length(body))";

/** Seqs per DELETE: one statement's page work is shared by its rows. */
const seqsPerStatement = 32;

export class KeptCounts {
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      move: db.prepare<[number, number, number]>("UPDATE queue_message_counts SET messages = messages + ?, bytes = bytes + ? WHERE queue_id = ?"),
      // A SELECT: statements that only read keep no journal, whatever functions they call.
      sizes: sizedStatements<[number, number]>(db, (n) => `SELECT queue_id, ${keptBytesSql} FROM messages WHERE seq IN (${marks(n)})`),
      delete: sizedStatements(db, (n) => `DELETE FROM messages WHERE seq IN (${marks(n)})`),
    };
  }

  /** Inside a write: `messages` rows of `bytes` body bytes in all added to the queue. */
  added(queueId: number, messages: number, bytes: number): void {
    this.sql.move.run(messages, bytes, queueId);
  }

  /**
   * Inside a write: deletes the queue's messages `seqs` (read in this write, so all there),
   * whose bodies hold `bytes` bytes in all, and takes them off its counts.
   */
  deleteOf(queueId: number, seqs: readonly number[], bytes: number): void {
    if (seqs.length === 0) return;
    for (let i = 0; i < seqs.length; i += seqsPerStatement) {
      const chunk = seqs.slice(i, i + seqsPerStatement);
      this.sql.delete(chunk.length).run(...chunk);
    }
    this.sql.move.run(-seqs.length, -bytes, queueId);
  }

  /** Inside a write: deletes messages by seq, whichever queues they are in; seqs not there are skipped. */
  deleteSeqs(seqs: readonly number[]): void {
    for (let i = 0; i < seqs.length; i += seqsPerStatement) {
      const chunk = seqs.slice(i, i + seqsPerStatement);
      const sizes = this.sql.sizes(chunk.length).raw().all(...chunk);
      if (sizes.length === 0) continue;
      this.sql.delete(chunk.length).run(...chunk);
      // Usually all of one queue (a lease's acks); the counts move once per queue.
      const byQueue = new Map<number, [number, number]>();
      for (const [queueId, bytes] of sizes) {
        const sum = byQueue.get(queueId);
        if (sum === undefined) byQueue.set(queueId, [1, bytes]);
        else {
          sum[0]++;
          sum[1] += bytes;
        }
      }
      for (const [queueId, [messages, bytes]] of byQueue) this.sql.move.run(-messages, -bytes, queueId);
    }
  }

  /** Inside a write: takes `messages` rows of `bytes` bytes off the queue's counts (a bulk DELETE the caller ran). */
  removed(queueId: number, messages: number, bytes: number): void {
    if (messages > 0) this.sql.move.run(-messages, -bytes, queueId);
  }
}
