/** A row of the messages table, as both stores read it, and core's record of it. */
import { attributesFromJson } from "../../core/attributes-json.js";
import type { StoredMessage } from "../../core/message.js";

export interface MessageRow {
  seq: number;
  queue_id: number;
  message_id: string;
  body: string;
  attributes: string | null;
  system_attributes: string | null;
  body_md5: string;
  attributes_md5: string | null;
  system_attributes_md5: string | null;
  sent_at_ms: number;
  visible_at_ms: number;
  priority: number;
  group_id: string | null;
  dedup_id: string | null;
  sender_id: string;
  receive_count: number;
  first_received_at_ms: number | null;
  received_at_ms: number | null;
  receipt_token: string | null;
  dead_letter_source: string | null;
}

/** A ready message as a lease reads it from a ready index: its place in receive order and its id. */
export type ReadyMessageRow = Pick<MessageRow, "seq" | "message_id" | "priority" | "sent_at_ms" | "visible_at_ms">;

export function toMessage(row: MessageRow): StoredMessage {
  return {
    seq: row.seq,
    queueId: row.queue_id,
    messageId: row.message_id,
    body: row.body,
    attributes: attributesFromJson(row.attributes),
    systemAttributes: attributesFromJson(row.system_attributes),
    bodyMd5: row.body_md5,
    attributesMd5: row.attributes_md5 ?? undefined,
    systemAttributesMd5: row.system_attributes_md5 ?? undefined,
    sentAtMs: row.sent_at_ms,
    visibleAtMs: row.visible_at_ms,
    priority: row.priority,
    groupId: row.group_id ?? undefined,
    deduplicationId: row.dedup_id ?? undefined,
    senderId: row.sender_id,
    receiveCount: row.receive_count,
    firstReceivedAtMs: row.first_received_at_ms ?? undefined,
    receiptToken: row.receipt_token ?? undefined,
    deadLetterSourceQueueName: row.dead_letter_source ?? undefined,
  };
}

/**
 * A FIFO message moved to another queue as a new enqueue there (dead-lettering, redrive): a new
 * row, sent and visible now, never received.
 */
export interface Reenqueue {
  queueId: number;
  nowMs: number;
  /** Dead-lettering: the source queue's name (DeadLetterQueueSourceArn); a redrive clears it. */
  deadLetterSource?: string;
  /**
   * Dead-lettering: the deduplication id becomes the MessageId, as in SQS, so two moved messages
   * that shared a deduplication id stay two messages.
   */
  dedupIdFromMessageId: boolean;
}
