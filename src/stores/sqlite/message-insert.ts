/** The one INSERT of a new message, shared by SQS sends and job submits. */
import type Database from "better-sqlite3";
import { attributesToJson } from "../../core/attributes-json.js";
import type { NewMessage } from "../../core/message.js";

export type MessageInserter = (queueId: number, m: NewMessage) => number;

/** Prepares the statement once; the returned function inserts and returns the new seq. */
export function prepareMessageInsert(db: Database.Database): MessageInserter {
  const statement = db.prepare(`INSERT INTO messages (queue_id, message_id, body, attributes, system_attributes, body_md5,
    attributes_md5, system_attributes_md5, sent_at_ms, visible_at_ms, priority, group_id, dedup_id, sender_id)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  return (queueId, m) =>
    Number(
      statement.run(
        queueId,
        m.messageId,
        m.body,
        attributesToJson(m.attributes),
        attributesToJson(m.systemAttributes),
        m.bodyMd5,
        m.attributesMd5 ?? null,
        m.systemAttributesMd5 ?? null,
        m.sentAtMs,
        m.visibleAtMs,
        m.priority,
        m.groupId ?? null,
        m.deduplicationId ?? null,
        m.senderId,
      ).lastInsertRowid,
    );
}
