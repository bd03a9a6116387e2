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
 * Ready messages of a queue that require something, every class together (such messages have no
 * group), in receive order: what a worker serving every class of the queue may take besides the
 * unlabelled. Parameters: queue id, now, oldest sent time kept, limit.
 */
export function readyClassedQuery(columns: string): string {
  return `SELECT ${columns} FROM messages INDEXED BY messages_ready_classed
    WHERE queue_id = ? AND ${everyPriority} AND req_class IS NOT NULL AND visible_at_ms <= ? AND sent_at_ms >= ?
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
