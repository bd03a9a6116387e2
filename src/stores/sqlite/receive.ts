/**
 * messageReceive for SQLite, run inside a group-commit write. Three ways to pick messages:
 * - plain (no message groups in the queue): the ungrouped ready index, priority then age;
 * - fair (a standard queue whose messages have groups): least-served group first, one message per
 *   group per round, priority then age within a group (docs/fair-queues.md);
 * - FIFO: the oldest available group first (the one whose oldest message is oldest, as SQS), as
 *   many of its messages as it has ready in strict seq order, then the next group; groups with a
 *   message in flight are skipped.
 * Every path can dead-letter (move instead of deliver) and FIFO receives can replay an attempt.
 */
import type Database from "better-sqlite3";
import { limits } from "../../core/limits.js";
import { dueForDeadLetter, expiredRowsPerWrite, fifoLookahead, fifoTakeable } from "../../core/message-rules.js";
import type { StoredMessage } from "../../core/message.js";
import type { MessageReceiveParams as ReceiveParams, ReceiveAttempt, ReceiveResult } from "../../core/store.js";
import { keptBodySql } from "./kept-bodies.js";
import { type MessageContent, type MessageContentCache, type MessageState, messageOf } from "./message-content-cache.js";
import type { MessageRow } from "../codecs/message-row.js";
import { nextReadyInGroupQuery, readyUngroupedQuery } from "./ready-order.js";
import { SqliteFairFlows, flowsPerPage } from "./fair-flows.js";
import { ungroupedFlow } from "../../core/fair-rounds.js";
import { type SizedStatements, marks, sizedStatements } from "./sized-statements.js";
import { boundLimit } from "./bound-limit.js";
import { prepareQueueExists } from "./queue-exists.js";
import type { KeptCounts } from "./kept-counts.js";
import { prepareReenqueue } from "./reenqueue.js";

export type { ReceiveParams };

/**
 * After a plain receive found a message the content cache didn't hold (a backlog bigger than the
 * cache, say), this many receives read full rows at once instead of trying the narrow read first.
 */
const cacheMissBackoff = 16;
/** The columns of MessageState: a narrow read, the rest comes from the content cache. */
const stateColumns = "seq, queue_id, message_id, sent_at_ms, visible_at_ms, receive_count, first_received_at_ms, receipt_token, dead_letter_source";
/** Seqs leased per UPDATE: a receive's maximum, so one statement per plain receive. */
const leaseChunk = limits.receiveMaxMessages;

export class SqliteReceiver {
  private readonly sql;
  /** Plain receives left that skip the narrow read (see cacheMissBackoff). */
  private fullReadsLeft = 0;
  /** The lease UPDATE for n seqs: one statement per plain receive. */
  private readonly leaseStatement: SizedStatements<unknown>;
  private readonly fair: SqliteFairFlows;

  constructor(
    db: Database.Database,
    private readonly toMessage: (row: MessageRow) => StoredMessage,
    counts: KeptCounts,
    private readonly cache?: MessageContentCache,
  ) {
    this.fair = new SqliteFairFlows(db);
    this.leaseStatement = sizedStatements(
      db,
      (n) => `UPDATE messages SET visible_at_ms = ?, receive_count = receive_count + 1,
        first_received_at_ms = coalesce(first_received_at_ms, ?), received_at_ms = ?, receipt_token = ? WHERE seq IN (${marks(n)})`,
    );
    this.sql = {
      readyUngrouped: db.prepare<[number, number, number, number], MessageRow>(readyUngroupedQuery("*")),
      // The same rows, without the content columns: those come from the cache.
      readyUngroupedState: db.prepare<[number, number, number, number], MessageState>(
        readyUngroupedQuery(stateColumns),
      ),
      readyInGroup: db.prepare<[number, string, number, number], MessageRow>(nextReadyInGroupQuery("*")),
      groupHead: db.prepare<[number, string, number, number], MessageRow>(
        `SELECT * FROM messages INDEXED BY messages_group_seq
         WHERE queue_id = ? AND group_id = ? AND sent_at_ms >= ? ORDER BY seq ${boundLimit()}`,
      ),
      groupHeadState: db.prepare<[number, string, number, number], MessageState>(
        `SELECT ${stateColumns} FROM messages INDEXED BY messages_group_seq
         WHERE queue_id = ? AND group_id = ? AND sent_at_ms >= ? ORDER BY seq ${boundLimit()}`,
      ),
      // The same rows, only what decides whether the group can be taken from: most groups a FIFO
      // receive looks at are locked, and reading their full rows (bodies) cost most of its time.
      // [visible_at_ms, receive_count], as arrays (see flowsPage).
      groupHeadProbe: db
        .prepare<[number, string, number, number], [number, number]>(
          `SELECT visible_at_ms, receive_count FROM messages INDEXED BY messages_group_seq
           WHERE queue_id = ? AND group_id = ? AND sent_at_ms >= ? ORDER BY seq ${boundLimit()}`,
        )
        .raw(),
      // FIFO: groups in head order (oldest message first), skipping those whose head is in flight or
      // delayed — most locked groups, and they would otherwise head the walk — without a probe each.
      // [group_id, head_seq], as arrays: better-sqlite3's object rows cost more per row.
      fifoGroupsPage: db
        .prepare<[number, number, number], [string, number]>(
          `SELECT g.group_id, g.head_seq FROM message_groups g INDEXED BY message_groups_head JOIN messages h ON h.seq = g.head_seq
           WHERE g.queue_id = ? AND g.head_seq > ? AND h.visible_at_ms <= ? ORDER BY g.head_seq LIMIT ${flowsPerPage}`,
        )
        .raw(),
      // received_at_ms: the lease's start, for ChangeMessageVisibility's 12-hour cap.
      lease: db.prepare<[number, number, number, string, number]>(
        `UPDATE messages SET visible_at_ms = ?, receive_count = receive_count + 1,
           first_received_at_ms = coalesce(first_received_at_ms, ?), received_at_ms = ?, receipt_token = ? WHERE seq = ?`,
      ),
      // A job message's body is put back from its job (kept-bodies.ts): the dead-letter queue's
      // readers may outlive the job.
      deadLetter: db.prepare<[number, number, string, number]>(
        `UPDATE messages SET queue_id = ?, visible_at_ms = ?, receive_count = 0, first_received_at_ms = NULL,
           receipt_token = NULL, dead_letter_source = ?,
           body = CASE WHEN body_bytes IS NULL THEN body ELSE coalesce(${keptBodySql("messages")}, body) END, body_bytes = NULL WHERE seq = ?`,
      ),
      attemptGet: db.prepare<[number, string, number], { receipt_token: string; seqs: string }>(
        "SELECT receipt_token, seqs FROM receive_attempts WHERE queue_id = ? AND attempt_id = ? AND expires_at_ms > ?",
      ),
      attemptPut: db.prepare<[number, string, string, string, number]>(
        `INSERT INTO receive_attempts (queue_id, attempt_id, receipt_token, seqs, expires_at_ms) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (queue_id, attempt_id) DO UPDATE SET receipt_token = excluded.receipt_token, seqs = excluded.seqs, expires_at_ms = excluded.expires_at_ms`,
      ),
      attemptExpire: db.prepare<[number, number]>(
        `DELETE FROM receive_attempts WHERE (queue_id, attempt_id) IN
           (SELECT queue_id, attempt_id FROM receive_attempts WHERE queue_id = ? AND expires_at_ms <= ? LIMIT ${expiredRowsPerWrite})`,
      ),
      bySeq: db.prepare<[number], MessageRow>("SELECT * FROM messages WHERE seq = ?"),
      // FIFO dead-lettering is a new enqueue in the DLQ (reenqueue.ts).
      reenqueue: prepareReenqueue(db, counts),
      queueExists: prepareQueueExists(db),
      // A replayed receive is a receive again: its 12 hours start over too.
      extendVisibility: db.prepare<[number, number, number]>("UPDATE messages SET visible_at_ms = ?, received_at_ms = ? WHERE seq = ?"),
    };
  }

  receive(p: ReceiveParams): ReceiveResult {
    if (p.attempt) {
      const replayed = this.replay(p, p.attempt);
      if (replayed.length > 0) return { messages: replayed, deadLetteredCount: 0 };
    }
    const run = new ReceiveRun(p, this.sql, this.toMessage);
    if (p.fifo) this.receiveFifo(run);
    else if (this.fair.hasGroups(p.queueId)) this.receiveFair(run);
    else this.receivePlain(run);
    if (p.attempt && run.messages.length > 0) {
      this.sql.attemptExpire.run(p.queueId, p.nowMs);
      this.sql.attemptPut.run(p.queueId, p.attempt.attemptId, p.receiptToken, JSON.stringify(run.messages.map((m) => m.seq)), p.attempt.expiresAtMs);
    }
    return { messages: run.messages, deadLetteredCount: run.deadLettered };
  }

  private receivePlain(run: ReceiveRun): void {
    const p = run.p;
    for (;;) {
      const wanted = run.remaining;
      const cached = this.cachedContents(() => this.sql.readyUngroupedState.all(p.queueId, p.nowMs, p.minSentAtMs, wanted));
      let found: number;
      if (cached) {
        for (let k = 0; k < cached.states.length; k++) run.take(cached.states[k]!, true, cached.contents[k]);
        found = cached.states.length;
      } else {
        const rows = this.sql.readyUngrouped.all(p.queueId, p.nowMs, p.minSentAtMs, wanted);
        for (const row of rows) run.take(row, true);
        found = rows.length;
      }
      run.flushLeases(this.leaseStatement);
      // Dead-lettered rows left room: look again, unless the queue ran out.
      if (run.remaining === 0 || found < wanted) return;
    }
  }

  /**
   * Rows read narrow (`readStates`) with their content from the cache, or undefined if any is not
   * cached: the caller then reads full rows, and as nothing was written in between they are the
   * same rows.
   */
  private cachedContents(readStates: () => MessageState[]): { states: MessageState[]; contents: MessageContent[] } | undefined {
    const cache = this.cache;
    if (cache === undefined || cache.size === 0) return undefined;
    if (this.fullReadsLeft > 0) {
      this.fullReadsLeft--;
      return undefined;
    }
    const states = readStates();
    const contents: MessageContent[] = [];
    for (const state of states) {
      const content = cache.recall(state.seq, state.message_id);
      if (content === undefined) {
        this.fullReadsLeft = cacheMissBackoff;
        return undefined;
      }
      contents.push(content);
    }
    return { states, contents };
  }

  /** Rounds over flows in least-served order, one message per flow per round. */
  private receiveFair(run: ReceiveRun): void {
    const p = run.p;
    const rounds = this.fair.rounds(p.queueId, p.max, this.sql.readyUngrouped.get(p.queueId, p.nowMs, p.minSentAtMs, 1) !== undefined);
    for (let flow = rounds.next(); flow !== undefined; flow = rounds.next()) {
      for (;;) {
        const row = flow === ungroupedFlow ? this.sql.readyUngrouped.get(p.queueId, p.nowMs, p.minSentAtMs, 1) : this.sql.readyInGroup.get(p.queueId, flow, p.nowMs, p.minSentAtMs);
        if (!row) break;
        if (run.take(row)) {
          rounds.served(flow);
          break;
        }
      }
    }
    this.fair.settle(p.queueId, rounds);
  }

  /** Oldest available group first; each group's leading run of visible messages, in seq order. */
  private receiveFifo(run: ReceiveRun): void {
    const p = run.p;
    let afterSeq = 0;
    for (;;) {
      const page = this.sql.fifoGroupsPage.all(p.queueId, afterSeq, p.nowMs);
      for (const [groupId] of page) {
        this.takeFromFifoGroup(run, groupId);
        if (run.remaining === 0) return;
      }
      if (page.length < flowsPerPage) return;
      afterSeq = page[page.length - 1]![1];
    }
  }

  private takeFromFifoGroup(run: ReceiveRun, groupId: string): void {
    const p = run.p;
    for (;;) {
      const probe = this.sql.groupHeadProbe.all(p.queueId, groupId, p.minSentAtMs, fifoLookahead);
      const visible = fifoTakeable(probe, p.nowMs);
      if (visible === 0) return; // in flight, empty, or its head is delayed
      // Nothing was written since the probe: these are its first rows, now in full.
      const cached = this.cachedContents(() => this.sql.groupHeadState.all(p.queueId, groupId, p.minSentAtMs, visible));
      const rows: readonly MessageState[] = cached?.states ?? this.sql.groupHead.all(p.queueId, groupId, p.minSentAtMs, visible);
      let deadLettered = 0;
      for (let k = 0; k < rows.length; k++) {
        const row = rows[k]!;
        if (run.remaining === 0) return;
        // Not cached: `rows` are the full rows.
        const taken = cached ? run.take(row, false, cached.contents[k]) : run.take(row as MessageRow);
        if (!taken) deadLettered++;
      }
      // Only dead-lettering can leave more of this group to look at.
      if (deadLettered === 0 || probe.length < fifoLookahead) return;
    }
  }

  /** A retried FIFO receive: the same messages and receipts, if still in flight under them. */
  private replay(p: ReceiveParams, attempt: ReceiveAttempt): StoredMessage[] {
    const record = this.sql.attemptGet.get(p.queueId, attempt.attemptId, p.nowMs);
    if (!record) return [];
    const out: StoredMessage[] = [];
    for (const seq of JSON.parse(record.seqs) as number[]) {
      const row = this.sql.bySeq.get(seq);
      if (!row || row.queue_id !== p.queueId || row.receipt_token !== record.receipt_token || row.visible_at_ms <= p.nowMs) continue;
      // SQS restarts the visibility timeout of a replayed receive.
      this.sql.extendVisibility.run(p.visibleUntilMs, p.nowMs, seq);
      out.push(this.toMessage({ ...row, visible_at_ms: p.visibleUntilMs }));
    }
    return out;
  }
}

type Statements = SqliteReceiver["sql"];

/** The state of one receive: what it leased and dead-lettered. */
class ReceiveRun {
  readonly messages: StoredMessage[] = [];
  deadLettered = 0;
  private deferredLeases: number[] = [];
  /** Whether the dead-letter target still exists, once asked (deadLetterTargetExists). */
  private deadLetterExists: boolean | undefined;

  constructor(
    readonly p: ReceiveParams,
    private readonly sql: Statements,
    private readonly toMessage: (row: MessageRow) => StoredMessage,
  ) {}

  get remaining(): number {
    return this.p.max - this.messages.length;
  }

  /**
   * Leases the row, or moves it to the dead-letter queue (false) if it was received too often.
   * `deferLease`: the UPDATE waits for flushLeases(), which must run before the next read of
   * ready messages (until then this row still looks ready).
   */
  take(row: MessageRow, deferLease?: boolean): boolean;
  /** The same, for a row read narrow, its content from the cache. */
  take(row: MessageState, deferLease: boolean, content: MessageContent | undefined): boolean;
  take(row: MessageState, deferLease = false, content?: MessageContent): boolean {
    const p = this.p;
    if (dueForDeadLetter(p, row.receive_count) && this.deadLetterTargetExists()) {
      // SQS keeps a standard message's enqueue time (retention goes on counting); a FIFO message
      // is enqueued anew: retention restarts, and it queues behind what reached the DLQ first.
      if (p.fifo) this.sql.reenqueue(row.seq, { queueId: p.deadLetter.queueId, nowMs: p.nowMs, deadLetterSource: p.deadLetter.sourceQueueName, dedupIdFromMessageId: true });
      else this.sql.deadLetter.run(p.deadLetter.queueId, p.nowMs, p.deadLetter.sourceQueueName, row.seq);
      this.deadLettered++;
      return false;
    }
    if (deferLease) this.deferredLeases.push(row.seq);
    else this.sql.lease.run(p.visibleUntilMs, p.nowMs, p.nowMs, p.receiptToken, row.seq);
    // The row as the UPDATE left it (set on the message: no second copy of a 19-column row).
    // Without cached content the caller passed the full row (the first overload).
    const m = content === undefined ? this.toMessage(row as MessageRow) : messageOf(row, content);
    m.visibleAtMs = p.visibleUntilMs;
    m.receiveCount = row.receive_count + 1;
    m.firstReceivedAtMs = row.first_received_at_ms ?? p.nowMs;
    m.receiptToken = p.receiptToken;
    this.messages.push(m);
    return true;
  }

  /**
   * Core resolved the dead-letter target before this write (a long poll keeps it for its whole
   * wait): a queue deleted since is no target (queue-exists.ts). The message is delivered instead,
   * as when core finds the DLQ gone (deadLetterTargetFor) and as SQS keeps messages in the source
   * when its DLQ is deleted — moved, it would be orphaned, or (with a group) fail the whole receive
   * on message_groups' foreign key. Asked once per receive, and only when a message is due to move.
   */
  private deadLetterTargetExists(): boolean {
    return (this.deadLetterExists ??= this.sql.queueExists(this.p.deadLetter!.queueId));
  }

  /** Runs the deferred lease UPDATEs, a batch of up to 10 per statement. */
  flushLeases(statementFor: SizedStatements<unknown>): void {
    const seqs = this.deferredLeases;
    for (let i = 0; i < seqs.length; i += leaseChunk) {
      const chunk = seqs.slice(i, i + leaseChunk);
      statementFor(chunk.length).run(this.p.visibleUntilMs, this.p.nowMs, this.p.nowMs, this.p.receiptToken, ...chunk);
    }
    this.deferredLeases = [];
  }
}
