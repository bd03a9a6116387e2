/** The PostgreSQL store's statement pieces over the shared row codecs (../codecs/). */
import { queueGone } from "../../core/errors.js";
import type { MessageRow } from "../codecs/message-row.js";

/** The order messages become ready in: every receive and lease takes them in it. */
export const readyOrder = "priority DESC, visible_at_ms, seq";

/** MessageRow's columns, for statements that name them (prepared ones: db.ts). */
export const messageColumns = [
  "seq", "queue_id", "message_id", "body", "attributes", "system_attributes", "body_md5", "attributes_md5", "system_attributes_md5", "sent_at_ms",
  "visible_at_ms", "priority", "group_id", "dedup_id", "sender_id", "receive_count", "first_received_at_ms", "received_at_ms", "receipt_token", "dead_letter_source",
] as const satisfies ReadonlyArray<keyof MessageRow>;

/** SQLSTATE of a foreign key violation: here, a write naming a queue deleted since it was read. */
export function isForeignKeyViolation(err: unknown): boolean {
  return (err as { code?: unknown }).code === "23503";
}

/** Runs a write that names queue `queueName`; its foreign key violation is the queue gone (core's queueGone). */
export async function queueMustExist<T>(queueName: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isForeignKeyViolation(err)) queueGone(queueName);
    throw err;
  }
}
