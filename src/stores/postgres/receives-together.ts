/**
 * Plain receives (a standard queue without message groups, no dead-letter target, no attempt id)
 * of one queue and instant in one messageReceiveMany — long polls woken together by a send,
 * requests parsed together — go to the database as one statement: it locks (SKIP LOCKED) as many
 * ready messages as they want together, in ready order, and hands them out in the order the
 * receives came: the first gets up to its max, the next up to its own, and so on. Each message is
 * leased under its own receive's receipt token and visibility timeout, so the answers are what the
 * receives would have got one after the other at that instant, with one round trip and one commit.
 *
 * A receive that gets nothing also learns, in the same statement, whether the queue has groups
 * (then it takes the transaction path of receive.ts) and, for a long poll, when a message becomes
 * visible before it ends.
 */
import type { MessageReceiveParams as ReceiveParams, ReceiveResult } from "../../core/store.js";
import type { Db, NamedStatement } from "./db.js";
import { type MessageRow, toMessage } from "../codecs/message-row.js";
import { messageColumns, readyOrder } from "./rows.js";

/** Undefined: the queue has message groups; the caller receives in a transaction instead. */
export type PlainReceiveResult = ReceiveResult | undefined;

const hasGroupsCondition = "EXISTS (SELECT 1 FROM message_groups WHERE queue_id = $1 AND group_id > '')";

/**
 * $1 queue, $2/$3/$4 each receive's max, visibility end and receipt token (in arrival order),
 * $5 now, $6 the retention bound, $7 the sum of the maxes, $8 the latest end of their long polls.
 * `skip`: how many of the ranked messages the receives before this one take. The CASEs make the
 * groups and next-visible subqueries run only when some receive may come back empty.
 */
const statement: NamedStatement = {
  name: "sluice_receive_plain_together",
  text: `WITH wanted AS (
    SELECT w.ord, w.max, w.visible_until_ms, w.receipt_token, sum(w.max) OVER (ORDER BY w.ord) - w.max AS skip
    FROM unnest($2::int[], $3::bigint[], $4::text[]) WITH ORDINALITY AS w (max, visible_until_ms, receipt_token, ord)),
  picked AS (
    SELECT seq, priority, visible_at_ms FROM messages
    WHERE queue_id = $1 AND group_id IS NULL AND req_class IS NULL AND visible_at_ms <= $5 AND sent_at_ms >= $6 AND NOT ${hasGroupsCondition}
    ORDER BY ${readyOrder} LIMIT $7 FOR UPDATE SKIP LOCKED),
  ranked AS (SELECT seq, row_number() OVER (ORDER BY ${readyOrder}) AS rank FROM picked),
  shared AS (SELECT r.seq, r.rank, w.ord, w.visible_until_ms, w.receipt_token FROM ranked r JOIN wanted w ON r.rank > w.skip AND r.rank <= w.skip + w.max),
  leased AS (UPDATE messages m SET visible_at_ms = s.visible_until_ms, receive_count = m.receive_count + 1,
      first_received_at_ms = coalesce(m.first_received_at_ms, $5), received_at_ms = $5, receipt_token = s.receipt_token
    FROM shared s WHERE m.seq = s.seq
    RETURNING ${messageColumns.map((c) => `m.${c}`).join(", ")}, s.rank, s.ord)
  SELECT ${messageColumns.map((c) => `l.${c}`).join(", ")}, l.rank, l.ord,
    CASE WHEN l.seq IS NULL THEN ${hasGroupsCondition} END AS has_groups,
    CASE WHEN $8::bigint IS NOT NULL AND (SELECT count(*) FROM picked) < $7 THEN
      (SELECT min(visible_at_ms) FROM messages WHERE queue_id = $1 AND visible_at_ms > $5 AND visible_at_ms <= $8) END AS next_visible_at_ms
  FROM (VALUES (1)) AS one LEFT JOIN leased l ON true`,
};

type LeasedRow = MessageRow & { rank: number; ord: number; has_groups: boolean | null; next_visible_at_ms: number | null };

/** Receives of one queue, `nowMs` and retention bound, in one statement; each answered in order (all undefined: the queue has groups). */
export async function receivePlainTogether(db: Db, receives: readonly ReceiveParams[]): Promise<PlainReceiveResult[]> {
  const first = receives[0]!;
  const waits = receives.flatMap((r) => (r.waitUntilMs === undefined ? [] : [r.waitUntilMs]));
  const { rows } = await db.query<LeasedRow>(statement, [
    first.queueId,
    receives.map((r) => r.max),
    receives.map((r) => r.visibleUntilMs),
    receives.map((r) => r.receiptToken),
    first.nowMs,
    first.minSentAtMs,
    receives.reduce((sum, r) => sum + r.max, 0),
    waits.length === 0 ? null : Math.max(...waits),
  ]);
  const head = rows[0]!;
  if (head.seq === null && head.has_groups === true) return receives.map(() => undefined);
  const mine: LeasedRow[][] = receives.map(() => []);
  if (head.seq !== null) for (const row of rows) mine[row.ord - 1]!.push(row);
  return receives.map((r, i) => {
    const leased = mine[i]!.sort((a, b) => a.rank - b.rank);
    const result: ReceiveResult = { messages: leased.map(toMessage), deadLetteredCount: 0 };
    if (leased.length === 0 && r.waitUntilMs !== undefined) {
      // Read up to the latest wait's end: a message visible after this one's ends is none for it.
      const atMs = head.next_visible_at_ms;
      result.nextVisible = { atMs: atMs !== null && atMs <= r.waitUntilMs ? atMs : undefined };
    }
    return result;
  });
}
