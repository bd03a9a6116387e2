/**
 * The one INSERT of new messages (SQS sends, job submits, FIFO re-enqueues use their own): a batch
 * is one multi-row statement built from arrays, whatever its size. Seqs come from the table's
 * sequence in the batch's order, or are given (preallocated by a send that deduplicates).
 */
import { attributesToJson } from "../../core/attributes-json.js";
import type { NewMessage } from "../../core/message.js";
import type { NamedStatement, Queryable } from "./db.js";

const columns = [
  ["message_id", "text"],
  ["body", "text"],
  ["attributes", "text"],
  ["system_attributes", "text"],
  ["body_md5", "text"],
  ["attributes_md5", "text"],
  ["system_attributes_md5", "text"],
  ["sent_at_ms", "bigint"],
  ["visible_at_ms", "bigint"],
  ["priority", "integer"],
  ["group_id", "text"],
  ["dedup_id", "text"],
  ["sender_id", "text"],
] as const;

function statement(withSeqs: boolean): NamedStatement {
  const all: Array<readonly [string, string]> = withSeqs ? [...columns, ["seq", "bigint"]] : [...columns];
  const names = all.map(([name]) => name);
  const arrays = all.map(([, type], i) => `$${i + 2}::${type}[]`);
  return {
    name: withSeqs ? "sluice_insert_messages_seqs" : "sluice_insert_messages",
    text: `INSERT INTO messages (queue_id, ${names.join(", ")})
    SELECT $1, ${names.map((n) => `t.${n}`).join(", ")} FROM unnest(${arrays.join(", ")}) WITH ORDINALITY AS t (${names.join(", ")}, ord)
    ORDER BY t.ord RETURNING seq`,
  };
}

const withoutSeqs = statement(false);
const withSeqs = statement(true);

/** Messages of several queues in one statement (send.ts): the queue is a column too. */
export const insertManyQueuesStatement: NamedStatement = {
  name: "sluice_insert_messages_queues",
  text: `INSERT INTO messages (queue_id, ${columns.map(([n]) => n).join(", ")})
    SELECT t.queue_id, ${columns.map(([n]) => `t.${n}`).join(", ")}
    FROM unnest($1::bigint[], ${columns.map(([, type], i) => `$${i + 2}::${type}[]`).join(", ")}) WITH ORDINALITY AS t (queue_id, ${columns.map(([n]) => n).join(", ")}, ord)
    ORDER BY t.ord RETURNING seq, message_id`,
};

/** Each column's values, in `columns` order. */
export function columnArrays(messages: readonly NewMessage[]): unknown[][] {
  const out: unknown[][] = columns.map(() => []);
  for (const m of messages) {
    const row = [
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
    ];
    row.forEach((v, i) => out[i]!.push(v));
  }
  return out;
}

/** Inserts the messages; returns their seqs in order. */
export async function insertMessages(q: Queryable, queueId: number, messages: readonly NewMessage[], seqs?: readonly number[]): Promise<number[]> {
  if (messages.length === 0) return [];
  const values = [queueId, ...columnArrays(messages)];
  if (seqs) values.push([...seqs]);
  const { rows } = await q.query<{ seq: number }>(seqs ? withSeqs : withoutSeqs, values);
  // The sequence hands out values in the SELECT's order: ascending seqs are the batch's order.
  return rows.map((r) => r.seq).sort((a, b) => a - b);
}

/**
 * Creates the rows of these groups (a new group starts at the queue's lowest served count) and
 * locks them until the transaction ends, in name order (no deadlock between two sends). Messages
 * of a group then get their seqs in the order their sends commit.
 */
export async function lockGroups(q: Queryable, queueId: number, groupIds: Iterable<string>): Promise<void> {
  const groups = [...new Set(groupIds)].sort();
  if (groups.length === 0) return;
  await q.query(
    `INSERT INTO message_groups (queue_id, group_id, served)
     SELECT $1, g, coalesce((SELECT min(served) FROM message_groups WHERE queue_id = $1), 0) FROM unnest($2::text[]) AS g ORDER BY g COLLATE "C"
     ON CONFLICT (queue_id, group_id) DO UPDATE SET served = message_groups.served`,
    [queueId, groups],
  );
}

/** Drops the rows of these groups that have no message left (see sluice_groups_settle); counts the ready ones at `nowMs`. */
export async function settleGroups(q: Queryable, queueId: number, groupIds: Iterable<string>, nowMs?: number): Promise<number> {
  const groups = [...new Set(groupIds)];
  if (groups.length === 0) return 0;
  const { rows } = await q.query<{ ready: number }>("SELECT sluice_groups_settle($1, $2::text[], $3) AS ready", [queueId, groups, nowMs ?? null]);
  return rows[0]!.ready;
}
