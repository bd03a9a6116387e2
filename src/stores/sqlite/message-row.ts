/** A row of the `messages` table as better-sqlite3 returns it (shared by the store and receive.ts). */
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
  receipt_token: string | null;
  dead_letter_source: string | null;
}
