/**
 * FIFO deduplication ids in SQLite: checked and recorded inside the send's write, so two
 * concurrent sends of one id can't both be enqueued. Ids outlive their messages (SQS keeps them
 * for the whole 5-minute window even after a delete); expired rows are trimmed a few at a time.
 */
import type Database from "better-sqlite3";
import type { NewMessage } from "../../core/message.js";
import type { SendDedup } from "../../core/store.js";
import { dedupScopeOf, expiredRowsPerWrite } from "../../core/message-rules.js";

export interface DedupHit {
  message_id: string;
  seq: number;
}


export class SqliteDedup {
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      find: db.prepare<[number, string, string, number], DedupHit>(
        "SELECT message_id, seq FROM message_dedup WHERE queue_id = ? AND scope = ? AND dedup_id = ? AND expires_at_ms > ?",
      ),
      record: db.prepare<[number, string, string, string, number, number]>(
        `INSERT INTO message_dedup (queue_id, scope, dedup_id, message_id, seq, expires_at_ms) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (queue_id, scope, dedup_id) DO UPDATE SET message_id = excluded.message_id, seq = excluded.seq, expires_at_ms = excluded.expires_at_ms`,
      ),
      expire: db.prepare<[number, number]>(
        `DELETE FROM message_dedup WHERE (queue_id, scope, dedup_id) IN
           (SELECT queue_id, scope, dedup_id FROM message_dedup WHERE queue_id = ? AND expires_at_ms <= ? LIMIT ${expiredRowsPerWrite})`,
      ),
    };
  }

  expire(queueId: number, nowMs: number): void {
    this.sql.expire.run(queueId, nowMs);
  }

  find(queueId: number, dedup: SendDedup, m: NewMessage): DedupHit | undefined {
    if (m.deduplicationId === undefined) return undefined;
    return this.sql.find.get(queueId, dedupScopeOf(dedup, m), m.deduplicationId, dedup.nowMs);
  }

  record(queueId: number, dedup: SendDedup, m: NewMessage, seq: number): void {
    if (m.deduplicationId === undefined) return;
    this.sql.record.run(queueId, dedupScopeOf(dedup, m), m.deduplicationId, m.messageId, seq, dedup.expiresAtMs);
  }
}
