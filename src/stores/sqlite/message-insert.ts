/** The one INSERT of a new message, shared by SQS sends and job submits. */
import type Database from "better-sqlite3";
import { attributesToJson } from "../../core/attributes-json.js";
import type { NewMessage } from "../../core/message.js";
import type { MessageContent, MessageContentCache } from "./message-content-cache.js";

export type MessageInserter = (queueId: number, m: NewMessage) => number;

/**
 * Prepares the statement once; the returned function inserts and returns the new seq. With a
 * cache, the new message's content is remembered for the receive that will read it.
 */
export function prepareMessageInsert(db: Database.Database, cache?: MessageContentCache): MessageInserter {
  const statement = db.prepare(`INSERT INTO messages (queue_id, message_id, body, attributes, system_attributes, body_md5,
    attributes_md5, system_attributes_md5, sent_at_ms, visible_at_ms, priority, group_id, dedup_id, sender_id)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  return (queueId, m) => {
    const content: MessageContent = {
      message_id: m.messageId,
      body: m.body,
      attributes: attributesToJson(m.attributes),
      system_attributes: attributesToJson(m.systemAttributes),
      body_md5: m.bodyMd5,
      attributes_md5: m.attributesMd5 ?? null,
      system_attributes_md5: m.systemAttributesMd5 ?? null,
      priority: m.priority,
      group_id: m.groupId ?? null,
      dedup_id: m.deduplicationId ?? null,
      sender_id: m.senderId,
    };
    const seq = Number(
      statement.run(
        queueId,
        content.message_id,
        content.body,
        content.attributes,
        content.system_attributes,
        content.body_md5,
        content.attributes_md5,
        content.system_attributes_md5,
        m.sentAtMs,
        m.visibleAtMs,
        content.priority,
        content.group_id,
        content.dedup_id,
        content.sender_id,
      ).lastInsertRowid,
    );
    cache?.remember(seq, content);
    return seq;
  };
}
