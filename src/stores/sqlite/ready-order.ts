/**
 * Receive order is priority (high first), then visibility time, then seq — the ready indexes'
 * order. A query constrained only by `visible_at_ms <= now` can't use the index range for it
 * (priority comes first in the index), so SQLite walked every in-flight message of the queue on
 * each receive that found fewer messages than it asked for, a cost that grew with the number in
 * flight. Naming every priority turns the scan into one
 * index range per priority, each ending at the first message that is not yet visible.
 */
import { limits } from "../../core/limits.js";
import { boundLimit } from "./bound-limit.js";

const priorities: number[] = [];
for (let p = limits.priorityMax; p >= limits.priorityMin; p--) priorities.push(p);

/** `priority IN (9, 8, …, 0)`, for the WHERE of a query that reads a ready index. */
const everyPriority = `priority IN (${priorities.join(", ")})`;

/**
 * Ungrouped ready messages of a queue that require nothing (every receive and lease may take
 * them), in receive order. Parameters: queue id, now, oldest sent time kept, limit.
 */
export function readyUngroupedQuery(columns: string): string {
  return `SELECT ${columns} FROM messages INDEXED BY messages_ready_ungrouped
    WHERE queue_id = ? AND ${everyPriority} AND group_id IS NULL AND req_class IS NULL AND visible_at_ms <= ? AND sent_at_ms >= ?
    ORDER BY priority DESC, visible_at_ms, seq ${boundLimit()}`;
}

/**
 * The first ready job messages of `classes` requirement classes together, in receive order (such
 * messages have no group): each class's head read from its index (which covers it), the heads
 * merged, and only the rows kept read from the table — one statement, not one per class.
 * Named parameters: q (queue id), now, min (oldest sent time kept), each (rows read per class),
 * limit (rows kept), c0…c<classes-1>.
 */
export function readyInClassesQuery(classes: number): string {
  const heads = Array.from(
    { length: classes },
    (_, i) => `SELECT * FROM (SELECT seq, req_class, priority, visible_at_ms, sent_at_ms FROM messages INDEXED BY messages_ready_class
      WHERE queue_id = @q AND req_class = @c${i} AND ${everyPriority} AND visible_at_ms <= @now AND sent_at_ms >= @min
      ORDER BY priority DESC, visible_at_ms, seq ${boundLimit("@each")})`,
  );
  // CROSS JOIN keeps the heads the outer loop: each is one rowid lookup.
  return `SELECT h.seq, m.message_id, h.req_class, h.priority, h.sent_at_ms, h.visible_at_ms
    FROM (${heads.join(" UNION ALL ")}) AS h
    CROSS JOIN messages AS m ON m.seq = h.seq`;
}

/** A group's next ready message. Parameters: queue id, group id, now, oldest sent time kept. */
export function nextReadyInGroupQuery(columns: string): string {
  return `SELECT ${columns} FROM messages INDEXED BY messages_group_ready
    WHERE queue_id = ? AND group_id = ? AND ${everyPriority} AND visible_at_ms <= ? AND sent_at_ms >= ?
    ORDER BY priority DESC, visible_at_ms, seq LIMIT 1`;
}

/** Throws for a priority the ready queries would never find (core validates it earlier). */
export function checkPriority(priority: number): void {
  if (!Number.isInteger(priority) || priority < limits.priorityMin || priority > limits.priorityMax) {
    throw new Error(`message priority ${priority} is outside ${limits.priorityMin}–${limits.priorityMax}`);
  }
}

/**
 * Fair receive's flows (message_groups rows, the ungrouped flow as group ''), served least first:
 * shared by SQS's fair receive (receive.ts) and job leases under tenant limits (limited-lease.ts).
 */
export const flowsPerPage = 64;
/** Whether a queue has any group. Parameters: queue id. */
export const hasGroupsQuery = "SELECT 1 FROM message_groups WHERE queue_id = ? AND group_id > '' LIMIT 1";
/** A page of flows after (served, group_id). Parameters: queue id, served, served, group id. */
export const flowsPageQuery = `SELECT group_id, served FROM message_groups
           WHERE queue_id = ? AND (served > ? OR (served = ? AND group_id > ?)) ORDER BY served, group_id LIMIT ${flowsPerPage}`;
/**
 * The ungrouped flow joins at the lowest count (it can't bank credit while the queue had no
 * groups). (`WHERE true`: SQLite's upsert after a SELECT needs a WHERE to parse.) Parameters: queue id, queue id.
 */
export const ungroupedFlowJoinQuery = `INSERT INTO message_groups (queue_id, group_id, served)
         SELECT ?, '', coalesce((SELECT min(served) FROM message_groups WHERE queue_id = ? AND group_id > ''), 0) WHERE true
         ON CONFLICT (queue_id, group_id) DO UPDATE SET served = max(served, excluded.served)`;
