/** A row of the queues table, as both stores read it, and core's record of it. */
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
