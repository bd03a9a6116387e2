/**
 * messageSendMany: the plain sends (no group, no deduplication id) of one call — for any queues —
 * are one multi-row INSERT: one statement and one commit for all. If one of their queues was
 * deleted meanwhile (a foreign key violation fails the whole statement), each is tried again
 * alone, so only that queue's fail. A send with a group or a deduplication id takes a
 * transaction: the groups' rows are locked first (so a group's messages get seqs in the order
 * their sends commit: FIFO order holds across nodes), then the seqs are drawn in the batch's
 * order, then each deduplication id is claimed by an INSERT that the primary key makes unique —
 * two nodes racing on one id: the second waits for the first, then finds it claimed.
 */
import type { NewMessage } from "../../core/message.js";
import type { MessageSendCall, SendDedup, SendOutcome, SentMessage } from "../../core/store.js";
import type { Db, Queryable } from "./db.js";
import { columnArrays, insertManyQueuesStatement, insertMessages, lockGroups } from "./message-insert.js";
import { isForeignKeyViolation } from "./rows.js";
import { dedupScopeOf, expiredRowsPerWrite } from "../../core/message-rules.js";


const isPlain = (s: MessageSendCall): boolean => !s.dedup && !s.messages.some((m) => m.groupId !== undefined);

export async function sendMany(db: Db, sends: readonly MessageSendCall[]): Promise<SendOutcome[]> {
  const answers = new Map<MessageSendCall, SendOutcome>();
  const alone = async (s: MessageSendCall): Promise<void> => {
    answers.set(s, await queueGoneIfMissing(() => sendOne(db, s)));
  };
  const plain = sends.filter(isPlain);
  const together = async (): Promise<void> => {
    try {
      const { rows } = await db.query<{ seq: number; message_id: string }>(insertManyQueuesStatement, [
        plain.flatMap((s) => s.messages.map(() => s.queueId)),
        ...columnArrays(plain.flatMap((s) => s.messages)),
      ]);
      const seqOf = new Map(rows.map((r) => [r.message_id, r.seq]));
      for (const s of plain) answers.set(s, s.messages.map((m) => ({ messageId: m.messageId, seq: seqOf.get(m.messageId)! })));
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      await Promise.all(plain.map(alone));
    }
  };
  if (plain.length < 2) await Promise.all(sends.map(alone));
  else await Promise.all([together(), ...sends.filter((s) => !isPlain(s)).map(alone)]);
  return sends.map((s) => answers.get(s)!);
}

async function queueGoneIfMissing(send: () => Promise<SentMessage[]>): Promise<SendOutcome> {
  try {
    return await send();
  } catch (err) {
    // The queue was deleted since the caller read it: nothing was written (one statement or transaction).
    if (isForeignKeyViolation(err)) return "queueGone";
    throw err;
  }
}

async function sendOne(db: Db, p: MessageSendCall): Promise<SentMessage[]> {
  if (isPlain(p)) {
    const seqs = await insertMessages(db, p.queueId, p.messages);
    return p.messages.map((m, i) => ({ messageId: m.messageId, seq: seqs[i]! }));
  }
  return db.transaction(async (tx) => {
    await lockGroups(tx, p.queueId, p.messages.flatMap((m) => (m.groupId === undefined ? [] : [m.groupId])));
    if (!p.dedup) {
      const seqs = await insertMessages(tx, p.queueId, p.messages);
      return p.messages.map((m, i) => ({ messageId: m.messageId, seq: seqs[i]! }));
    }
    return sendDeduplicated(tx, p.queueId, p.messages, p.dedup);
  });
}

async function sendDeduplicated(tx: Queryable, queueId: number, messages: NewMessage[], dedup: SendDedup): Promise<SentMessage[]> {
  await tx.query(
    `DELETE FROM message_dedup WHERE (queue_id, scope, dedup_id) IN
       (SELECT queue_id, scope, dedup_id FROM message_dedup WHERE queue_id = $1 AND expires_at_ms <= $2 LIMIT ${expiredRowsPerWrite})`,
    [queueId, dedup.nowMs],
  );
  const { rows: drawn } = await tx.query<{ seq: number }>("SELECT nextval(pg_get_serial_sequence('messages', 'seq')) AS seq FROM generate_series(1, $1)", [messages.length]);
  const seqs = drawn.map((r) => r.seq).sort((a, b) => a - b);
  // Core sends each id once per send (SendDedup): every message with one claims it.
  const claims = messages.flatMap((m, i) => (m.deduplicationId === undefined ? [] : [i]));
  const claimed = new Set<number>();
  if (claims.length > 0) {
    const { rows } = await tx.query<{ seq: number }>(
      `INSERT INTO message_dedup (queue_id, scope, dedup_id, message_id, seq, expires_at_ms)
       SELECT $1, t.scope, t.dedup_id, t.message_id, t.seq, $6 FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS t (scope, dedup_id, message_id, seq, ord)
       ORDER BY t.ord
       ON CONFLICT (queue_id, scope, dedup_id) DO UPDATE SET message_id = excluded.message_id, seq = excluded.seq, expires_at_ms = excluded.expires_at_ms
         WHERE message_dedup.expires_at_ms <= $7
       RETURNING seq`,
      [
        queueId,
        claims.map((i) => dedupScopeOf(dedup, messages[i]!)),
        claims.map((i) => messages[i]!.deduplicationId!),
        claims.map((i) => messages[i]!.messageId),
        claims.map((i) => seqs[i]!),
        dedup.expiresAtMs,
        dedup.nowMs,
      ],
    );
    for (const r of rows) claimed.add(r.seq);
  }
  // Ids claimed earlier (by another send, on any node): answered with the original.
  const lost = claims.filter((i) => !claimed.has(seqs[i]!));
  const originals = new Map<string, SentMessage>();
  if (lost.length > 0) {
    const { rows } = await tx.query<{ scope: string; dedup_id: string; message_id: string; seq: number }>(
      `SELECT d.scope, d.dedup_id, d.message_id, d.seq FROM message_dedup d JOIN unnest($2::text[], $3::text[]) AS t (scope, dedup_id)
         ON d.scope = t.scope AND d.dedup_id = t.dedup_id WHERE d.queue_id = $1`,
      [queueId, lost.map((i) => dedupScopeOf(dedup, messages[i]!)), lost.map((i) => messages[i]!.deduplicationId!)],
    );
    for (const r of rows) originals.set(`${r.scope}\u0000${r.dedup_id}`, { messageId: r.message_id, seq: r.seq, duplicate: true });
  }
  const toInsert = messages.flatMap((m, i) => (m.deduplicationId === undefined || claimed.has(seqs[i]!) ? [i] : []));
  const sent = messages.map((m, i): SentMessage => {
    if (m.deduplicationId === undefined || claimed.has(seqs[i]!)) return { messageId: m.messageId, seq: seqs[i]! };
    const original = originals.get(`${dedupScopeOf(dedup, m)}\u0000${m.deduplicationId}`);
    if (!original) throw new Error(`dedup id ${m.deduplicationId} neither claimed nor found`);
    return original;
  });
  await insertMessages(
    tx,
    queueId,
    toInsert.map((i) => messages[i]!),
    toInsert.map((i) => seqs[i]!),
  );
  return sent;
}
