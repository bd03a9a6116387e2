/**
 * messageReceive for PostgreSQL, safe with any number of nodes receiving at once:
 * - plain (no message groups in the queue): one statement, FOR UPDATE SKIP LOCKED, so concurrent
 *   receives take disjoint messages without waiting for each other; the plain receives of one
 *   queue in one messageReceiveMany share it (receives-together.ts);
 * - fair (a standard queue whose messages have groups) and FIFO: the receive first locks the rows
 *   of the groups it will serve (fair: least-served first; FIFO: oldest available group first;
 *   SKIP LOCKED: another receive holding a group is passed by), then reads those groups in a later
 *   statement, whose snapshot sees every receive that held them before. So no two receives ever
 *   take from one FIFO group at once.
 * The lease UPDATE re-checks visibility on the row's latest version: a message is leased once.
 */
import type { StoredMessage } from "../../core/message.js";
import type { MessageReceiveParams as ReceiveParams, ReceiveAttempt, ReceiveResult } from "../../core/store.js";
import type { Db, Queryable } from "./db.js";
import { addServed, flowReady, joinUngroupedFlow, queueHasGroups, readyInFlows } from "./fair-flows.js";
import { lockGroups, settleGroups } from "./message-insert.js";
import { dueForDeadLetter, expiredRowsPerWrite, fifoLookahead, fifoTakeable } from "../../core/message-rules.js";
import { receivePlainTogether } from "./receives-together.js";
import { FairRounds } from "../../core/fair-rounds.js";
import { receivesTogether } from "../../core/turn-batch.js";
import { type MessageRow, type Reenqueue, toMessage } from "../codecs/message-row.js";
import { readyOrder } from "./rows.js";


const leaseSet = `visible_at_ms = $2, receive_count = m.receive_count + 1, first_received_at_ms = coalesce(m.first_received_at_ms, $3),
  received_at_ms = $3, receipt_token = $4`;

export async function receiveMany(db: Db, receives: readonly ReceiveParams[]): Promise<ReceiveResult[]> {
  const { together, alone } = receivesTogether(receives);
  const answers = new Map<ReceiveParams, ReceiveResult>();
  await Promise.all([
    ...together.map(async (same) => {
      const results = await receivePlainTogether(db, same);
      // Undefined: the queue has groups; each receive takes the transaction path.
      await Promise.all(same.map(async (p, i) => answers.set(p, results[i] ?? (await receiveInTransaction(db, p)))));
    }),
    ...alone.map(async (p) => answers.set(p, await receiveInTransaction(db, p))),
  ]);
  return receives.map((p) => answers.get(p)!);
}

async function receiveInTransaction(db: Db, p: ReceiveParams): Promise<ReceiveResult> {
  const touched = new Set<string>();
  const result = await db.transaction(async (tx) => {
    touched.clear();
    if (p.attempt) {
      const replayed = await replay(tx, p, p.attempt);
      if (replayed.length > 0) return { messages: replayed, deadLetteredCount: 0 };
    }
    const run = new ReceiveRun(tx, p, touched);
    if (p.fifo) await receiveFifo(run);
    else if (await queueHasGroups(tx, p.queueId)) await receiveFair(run);
    else await receivePlain(run);
    await run.finish();
    if (p.attempt && run.messages.length > 0) await recordAttempt(tx, p, p.attempt, run.messages);
    return { messages: run.messages, deadLetteredCount: run.deadLettered };
  });
  // Groups that lost messages to the dead-letter queue may be empty now.
  if (touched.size > 0) await settleGroups(db, p.queueId, touched);
  return result;
}

/** Ungrouped ready messages, in a transaction (dead-lettering or an attempt id). */
async function receivePlain(run: ReceiveRun): Promise<void> {
  const p = run.p;
  for (;;) {
    const wanted = run.remaining;
    const { rows } = await run.tx.query<MessageRow>(
      `SELECT * FROM messages WHERE queue_id = $1 AND group_id IS NULL AND req_class IS NULL AND visible_at_ms <= $2 AND sent_at_ms >= $3
       ORDER BY ${readyOrder} LIMIT $4 FOR UPDATE SKIP LOCKED`,
      [p.queueId, p.nowMs, p.minSentAtMs, wanted],
    );
    let deadLettered = 0;
    for (const row of rows) if (!(await run.take(row))) deadLettered++;
    // Dead-lettered rows left room: look again, unless the queue ran out.
    if (deadLettered === 0 || run.remaining === 0 || rows.length < wanted) return;
  }
}

/** Rounds over flows in least-served order, one message per flow per round (docs/fair-queues.md). */
async function receiveFair(run: ReceiveRun): Promise<void> {
  const { tx, p } = run;
  await joinUngroupedFlow(tx, p.queueId, p.nowMs, p.minSentAtMs);
  const flows = await lockReadyFlows(tx, p, false);
  if (flows.length === 0) return;
  const ready = await readyInFlows<MessageRow>(tx, p, flows, flows.map(() => p.max), "*");
  const perFlow = new Map(flows.map((f, i) => [f, ready[i]!]));
  const rounds = new FairRounds(p.max, () => flows);
  for (let flow = rounds.next(); flow !== undefined; flow = rounds.next()) {
    const list = perFlow.get(flow)!;
    for (let row = list.shift(); row !== undefined; row = list.shift()) {
      if (await run.take(row)) {
        rounds.served(flow);
        break;
      }
    }
  }
  run.servedBy = rounds.servedBy;
}

/**
 * Locks (SKIP LOCKED) up to `max` flows that look ready. Fair: least-served first. FIFO: the oldest
 * available group first (the one whose oldest message is oldest, as SQS), whose oldest message is
 * visible and none of whose first ten is in flight. What the lock's snapshot saw is only a filter:
 * the caller reads the groups again, now that it holds them.
 */
async function lockReadyFlows(tx: Queryable, p: ReceiveParams, fifo: boolean): Promise<string[]> {
  const statement = fifo
    ? `SELECT g.group_id FROM message_groups g
       CROSS JOIN LATERAL (SELECT m.seq, m.visible_at_ms FROM messages m WHERE m.queue_id = $1 AND m.group_id = g.group_id ORDER BY m.seq LIMIT 1) h
       WHERE g.queue_id = $1 AND g.group_id <> '' AND h.visible_at_ms <= $2
         AND NOT EXISTS (SELECT 1 FROM (SELECT m.visible_at_ms, m.receive_count FROM messages m WHERE m.queue_id = $1 AND m.group_id = g.group_id AND m.sent_at_ms >= $3
                                        ORDER BY m.seq LIMIT ${fifoLookahead}) f WHERE f.visible_at_ms > $2 AND f.receive_count > 0)
       ORDER BY h.seq LIMIT $4 FOR UPDATE OF g SKIP LOCKED`
    : `SELECT g.group_id FROM message_groups g WHERE g.queue_id = $1 AND ${flowReady()} ORDER BY g.served, g.group_id LIMIT $4 FOR UPDATE OF g SKIP LOCKED`;
  const { rows } = await tx.query<{ group_id: string }>(statement, [p.queueId, p.nowMs, p.minSentAtMs, p.max]);
  return rows.map((r) => r.group_id);
}

/** Oldest available group first; each group's leading run of visible messages, in seq order. */
async function receiveFifo(run: ReceiveRun): Promise<void> {
  const { tx, p } = run;
  const groups = await lockReadyFlows(tx, p, true);
  if (groups.length === 0) return;
  const heads = await groupHeads(tx, p, groups);
  for (const group of groups) {
    if (run.remaining === 0) return;
    let probe = heads.get(group) ?? [];
    for (;;) {
      let deadLettered = 0;
      for (const row of probe.slice(0, fifoTakeable(probe.map((m) => [m.visible_at_ms, m.receive_count] as const), p.nowMs))) {
        if (run.remaining === 0) break;
        if (!(await run.take(row))) deadLettered++;
      }
      // Only dead-lettering can leave more of this group to look at.
      if (deadLettered === 0 || probe.length < fifoLookahead || run.remaining === 0) break;
      probe = (await groupHeads(tx, p, [group])).get(group) ?? [];
    }
  }
}

/** The first ten messages (by seq, within retention) of each group, read in one statement. */
async function groupHeads(tx: Queryable, p: ReceiveParams, groups: string[]): Promise<Map<string, MessageRow[]>> {
  const { rows } = await tx.query<MessageRow>(
    `SELECT m.* FROM unnest($2::text[]) AS g (group_id)
     CROSS JOIN LATERAL (SELECT * FROM messages WHERE queue_id = $1 AND group_id = g.group_id AND sent_at_ms >= $3 ORDER BY seq LIMIT ${fifoLookahead}) m`,
    [p.queueId, groups, p.minSentAtMs],
  );
  const byGroup = new Map<string, MessageRow[]>();
  for (const row of rows) {
    const list = byGroup.get(row.group_id!);
    if (list) list.push(row);
    else byGroup.set(row.group_id!, [row]);
  }
  for (const list of byGroup.values()) list.sort((a, b) => a.seq - b.seq);
  return byGroup;
}

/** A retried FIFO receive: the same messages and receipts, if still in flight under them. */
async function replay(tx: Queryable, p: ReceiveParams, attempt: ReceiveAttempt): Promise<StoredMessage[]> {
  const { rows: records } = await tx.query<{ receipt_token: string; seqs: Array<number | string> }>(
    "SELECT receipt_token, seqs FROM receive_attempts WHERE queue_id = $1 AND attempt_id = $2 AND expires_at_ms > $3",
    [p.queueId, attempt.attemptId, p.nowMs],
  );
  const record = records[0];
  if (!record) return [];
  const seqs = record.seqs.map(Number);
  // SQS restarts the visibility timeout of a replayed receive, and its 12 hours.
  const { rows } = await tx.query<MessageRow>(
    `UPDATE messages SET visible_at_ms = $4, received_at_ms = $5
     WHERE seq = ANY ($1::bigint[]) AND queue_id = $2 AND receipt_token = $3 AND visible_at_ms > $5 RETURNING *`,
    [seqs, p.queueId, record.receipt_token, p.visibleUntilMs, p.nowMs],
  );
  const order = new Map(seqs.map((s, i) => [s, i]));
  return rows.sort((a, b) => order.get(a.seq)! - order.get(b.seq)!).map(toMessage);
}

async function recordAttempt(tx: Queryable, p: ReceiveParams, attempt: ReceiveAttempt, messages: StoredMessage[]): Promise<void> {
  await tx.query(
    `DELETE FROM receive_attempts WHERE (queue_id, attempt_id) IN
       (SELECT queue_id, attempt_id FROM receive_attempts WHERE queue_id = $1 AND expires_at_ms <= $2 LIMIT ${expiredRowsPerWrite})`,
    [p.queueId, p.nowMs],
  );
  await tx.query(
    `INSERT INTO receive_attempts (queue_id, attempt_id, receipt_token, seqs, expires_at_ms) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (queue_id, attempt_id) DO UPDATE SET receipt_token = excluded.receipt_token, seqs = excluded.seqs, expires_at_ms = excluded.expires_at_ms`,
    [p.queueId, attempt.attemptId, p.receiptToken, messages.map((m) => m.seq), attempt.expiresAtMs],
  );
}

/** The state of one receive in its transaction: what it leases, dead-letters and serves per group. */
class ReceiveRun {
  readonly messages: StoredMessage[] = [];
  deadLettered = 0;
  private readonly leaseSeqs: number[] = [];
  /** A fair receive's starts per flow. */
  servedBy = new Map<string, number>();
  private deadLetterExists: boolean | undefined;
  private pending = 0;

  constructor(
    readonly tx: Queryable,
    readonly p: ReceiveParams,
    /** Groups that lose messages to the dead-letter queue (settled after commit). */
    private readonly touched: Set<string>,
  ) {}

  get remaining(): number {
    return this.p.max - this.pending;
  }

  /** Leases the row (at finish), or moves it to the dead-letter queue now (false) if it was received too often. */
  async take(row: MessageRow): Promise<boolean> {
    const p = this.p;
    if (dueForDeadLetter(p, row.receive_count) && (await this.deadLetterTargetExists())) {
      // Moved now, not at finish: the caller's next read of ready messages must not see it again.
      await this.moveToDeadLetter(row);
      if (row.group_id !== null) this.touched.add(row.group_id);
      this.deadLettered++;
      return false;
    }
    this.leaseSeqs.push(row.seq);
    this.pending++;
    return true;
  }

  /**
   * Core resolved the target before this transaction: a queue deleted since is no target, and the
   * message is delivered instead (as SQS keeps messages when their dead-letter queue is gone).
   * The key-share lock keeps it from being deleted until this transaction ends.
   */
  private async deadLetterTargetExists(): Promise<boolean> {
    if (this.deadLetterExists === undefined) {
      const { rowCount } = await this.tx.query("SELECT 1 FROM queues WHERE id = $1 FOR KEY SHARE", [this.p.deadLetter!.queueId]);
      this.deadLetterExists = (rowCount ?? 0) > 0;
    }
    return this.deadLetterExists;
  }

  /** Writes the leases and the served counts. */
  async finish(): Promise<void> {
    const { tx, p } = this;
    if (this.leaseSeqs.length > 0) {
      // Re-checked on each row's latest version: a message taken meanwhile is not leased twice.
      const { rows } = await tx.query<MessageRow>(
        `UPDATE messages m SET ${leaseSet} WHERE m.seq = ANY ($1::bigint[]) AND m.visible_at_ms <= $3 RETURNING m.*`,
        [this.leaseSeqs, p.visibleUntilMs, p.nowMs, p.receiptToken],
      );
      const bySeq = new Map(rows.map((r) => [r.seq, r]));
      for (const seq of this.leaseSeqs) {
        const row = bySeq.get(seq);
        if (row) this.messages.push(toMessage(row));
      }
    }
    await addServed(tx, p.queueId, this.servedBy);
  }

  /**
   * SQS keeps a standard message's enqueue time (retention goes on counting); a FIFO message is
   * enqueued anew: a new row at the back of its group in the dead-letter queue.
   */
  private async moveToDeadLetter(row: MessageRow): Promise<void> {
    const { tx, p } = this;
    const target = p.deadLetter!;
    if (row.group_id !== null) await lockGroups(tx, target.queueId, [row.group_id]);
    if (p.fifo) {
      await reenqueue(tx, [row.seq], { queueId: target.queueId, nowMs: p.nowMs, deadLetterSource: target.sourceQueueName, dedupIdFromMessageId: true });
    } else {
      await tx.query(
        `UPDATE messages SET queue_id = $1, visible_at_ms = $2, receive_count = 0, first_received_at_ms = NULL, received_at_ms = NULL,
           receipt_token = NULL, dead_letter_source = $3 WHERE seq = $4`,
        [target.queueId, p.nowMs, target.sourceQueueName, row.seq],
      );
    }
  }
}

const keptColumns = "message_id, body, attributes, system_attributes, body_md5, attributes_md5, system_attributes_md5, priority, group_id, sender_id";

/**
 * Moves FIFO messages to another queue as new enqueues there (new seqs, in their old order; sent
 * and visible now, never received). The caller holds the destination's group rows.
 */
export async function reenqueue(tx: Queryable, seqs: number[], to: Reenqueue): Promise<void> {
  await tx.query(
    `INSERT INTO messages (${keptColumns}, dedup_id, dead_letter_source, queue_id, visible_at_ms, sent_at_ms)
     SELECT ${keptColumns}, CASE WHEN $1 THEN message_id ELSE dedup_id END, $2, $3, $4, $4 FROM messages WHERE seq = ANY ($5::bigint[]) ORDER BY seq`,
    [to.dedupIdFromMessageId, to.deadLetterSource ?? null, to.queueId, to.nowMs, seqs],
  );
  await tx.query("DELETE FROM messages WHERE seq = ANY ($1::bigint[])", [seqs]);
}
