/**
 * messageDeleteMany: every delete of the call — for any queues, by receipt or by message alone —
 * is one DELETE: one statement and one commit. Each delete is answered for its own receipts; a
 * message two of them listed counts for the first, as deletes one after the other would answer.
 * FIFO deletes then settle their groups and look up why their failed receipts failed.
 */
import { receiptsDeleted } from "../../core/message-rules.js";
import type { DeleteResult, MessageDeleteCall } from "../../core/store.js";
import type { Db, NamedStatement } from "./db.js";
import { settleGroups } from "./message-insert.js";

interface DeletedRow {
  seq: number;
  receipt_token: string;
  group_id: string | null;
}

/** Per receipt: its queue and seq, the token it must match (null: any) and when its lease must still run (null: whenever). */
const statement: NamedStatement = {
  name: "sluice_delete_messages_many",
  text: `DELETE FROM messages m USING unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[]) AS r (queue_id, seq, token, in_flight_at)
  WHERE m.seq = r.seq AND m.queue_id = r.queue_id AND (r.token IS NULL OR m.receipt_token = r.token) AND (r.in_flight_at IS NULL OR m.visible_at_ms > r.in_flight_at)
  RETURNING m.seq, m.receipt_token, m.group_id`,
};

export async function deleteMany(db: Db, deletes: readonly MessageDeleteCall[]): Promise<DeleteResult[]> {
  for (const d of deletes) if (d.refuseExpired && d.nowMs === undefined) throw new Error("messageDelete: refuseExpired needs nowMs");
  const receipts = deletes.flatMap((d) => d.receipts.map((r) => ({ d, r })));
  const { rows } = await db.query<DeletedRow>(statement, [
    receipts.map(({ d }) => d.queueId),
    receipts.map(({ r }) => r.seq),
    receipts.map(({ d, r }) => (d.anyReceipt ? null : r.token)),
    receipts.map(({ d }) => (d.refuseExpired ? d.nowMs : null)),
  ]);
  const removed = new Map(rows.map((r) => [r.seq, r.receipt_token]));
  const groupOf = new Map(rows.map((r) => [r.seq, r.group_id]));
  return Promise.all(
    deletes.map(async (d): Promise<DeleteResult> => {
      const deleted = receiptsDeleted(d.receipts, removed, d.anyReceipt);
      const groups = d.receipts.flatMap((r, i) => (deleted[i] && groupOf.get(r.seq) ? [groupOf.get(r.seq)!] : []));
      const groupsReady = await settleGroups(db, d.queueId, groups, d.nowMs);
      if (!d.refuseExpired) return { deleted, groupsReady: d.nowMs === undefined ? 0 : groupsReady };
      // A receipt that deleted nothing while its message is still here: its lease has ended.
      const failed = d.receipts.filter((_, i) => !deleted[i]).map((r) => r.seq);
      const present = new Set(
        failed.length === 0 ? [] : (await db.query<{ seq: number }>("SELECT seq FROM messages WHERE queue_id = $1 AND seq = ANY ($2::bigint[])", [d.queueId, failed])).rows.map((r) => r.seq),
      );
      return { deleted, groupsReady, expired: d.receipts.map((r, i) => !deleted[i] && present.has(r.seq)) };
    }),
  );
}
