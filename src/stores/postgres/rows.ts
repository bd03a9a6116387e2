/** Rows of the queues, messages and move_tasks tables, and their mapping to core's records. */
import { attributesFromJson } from "../../core/attributes-json.js";
import type { StoredMessage } from "../../core/message.js";
import type { MoveTaskRecord, MoveTaskStatus } from "../../core/move-task-record.js";
import type { QueueConfig, QueueRecord } from "../../core/queue.js";

export interface QueueRow {
  id: number;
  account: string;
  name: string;
  config: string;
  tags: string;
  created_at_ms: number;
  updated_at_ms: number;
  purged_at_ms: number | null;
}

export function toQueue(row: QueueRow): QueueRecord {
  return {
    id: row.id,
    account: row.account,
    name: row.name,
    config: JSON.parse(row.config) as QueueConfig,
    tags: JSON.parse(row.tags) as Record<string, string>,
    createdAtMs: row.created_at_ms,
    updatedAtMs: row.updated_at_ms,
    purgedAtMs: row.purged_at_ms ?? undefined,
  };
}

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

/** MessageRow's columns, for statements that name them (prepared ones: db.ts). */
/** The order messages become ready in: every receive and lease takes them in it. */
export const readyOrder = "priority DESC, visible_at_ms, seq";

export const messageColumns = [
  "seq", "queue_id", "message_id", "body", "attributes", "system_attributes", "body_md5", "attributes_md5", "system_attributes_md5", "sent_at_ms",
  "visible_at_ms", "priority", "group_id", "dedup_id", "sender_id", "receive_count", "first_received_at_ms", "received_at_ms", "receipt_token", "dead_letter_source",
] as const satisfies ReadonlyArray<keyof MessageRow>;

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

/** SQLSTATE of a foreign key violation: here, a write naming a queue deleted since it was read. */
export function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: unknown }).code === "23503";
}
