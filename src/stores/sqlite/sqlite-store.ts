/**
 * The embedded default store: one SQLite file in WAL mode, every write through group commit and
 * acknowledged only once on disk (synchronous=FULL, or pipelined WAL syncs: wal-syncer.ts).
 * better-sqlite3 is synchronous, so reads run directly (they see only committed data: writes run
 * inside flushes, never interleaved with a request's reads).
 */
import Database from "better-sqlite3";
import { limits } from "../../core/limits.js";
import type { StoredMessage } from "../../core/message.js";
import type { QueueConfig, QueueRecord } from "../../core/queue.js";
import type { Notifier } from "../../core/notifier.js";
import type { DeleteResult, MessageDeleteCall, MessageReceiveParams, MessageSendCall, MessagesDeleted, QueueDeleted, QueueStats, ReceiptRef, ReceiveResult, SendOutcome, SentMessage, Store, VisibilityChangeResult } from "../../core/store.js";
import { type LeaseState, receiptsDeleted, visibilityChangeOf } from "../../core/message-rules.js";
import { SqliteDedup } from "./fifo-dedup.js";
import { GroupCommitter } from "./group-commit.js";
import { SqliteJobStore } from "./jobs-store.js";
import { SqliteSchedules } from "./schedules-store.js";
import { SqliteBatches } from "./batches-store.js";
import { SqliteBlobs } from "./blobs-store.js";
import { type MessageRow, toMessage } from "../codecs/message-row.js";
import { prepareKeptBody } from "./kept-bodies.js";
import { type QueueRow, toQueue } from "../codecs/queue-row.js";
import { MessageContentCache, defaultMessageCacheBytes } from "./message-content-cache.js";
import { mergeLimit, mergeVisible, perPart, visibleParts } from "./visible-order.js";
import { WalCheckpointer, type WalCheckpointerOptions } from "./wal-checkpointer.js";
import { IdleWalTruncate } from "./idle-wal-truncate.js";
import { prepareMessageInsert } from "./message-insert.js";
import { type SizedStatements, marks, sizedStatements } from "./sized-statements.js";
import { migrate } from "./migrate.js";
import { SqliteMoveTasks } from "./move-tasks.js";
import { SqliteQueueCounts } from "./queue-counts.js";
import { KeptCounts, keptBytesSql } from "./kept-counts.js";
import { prepareQueueExists } from "./queue-exists.js";
import { SqliteReceiver } from "./receive.js";
import { type InlineSync, type SyncFn, WalSyncer, defaultInlineSync } from "./wal-syncer.js";
import { boundLimit } from "./bound-limit.js";
import { SqliteWorkers } from "./workers-store.js";
import { type SharedFile, attachSharedFile, detachSharedFile } from "./shared-file.js";

/** Pages copied per backup step: 1–2 MiB (4 or 8 KiB pages), a millisecond or two of the event loop. */
const backupPagesPerStep = 256;

/** Seqs deleted per statement: SQS's batch limit, so one statement per batch. */
const deleteChunk = limits.batchEntriesMax;

/** Receipts grouped by token (as `tokenOf` reads it): the messages of one receive share it. */
function seqsByToken(receipts: readonly ReceiptRef[], tokenOf: (r: ReceiptRef) => string): Map<string, number[]> {
  const byToken = new Map<string, number[]>();
  for (const r of receipts) {
    const token = tokenOf(r);
    const seqs = byToken.get(token);
    if (seqs === undefined) byToken.set(token, [r.seq]);
    else seqs.push(r.seq);
  }
  return byToken;
}

export interface SqliteStoreOptions {
  /** Path of the database file (":memory:" only for throwaway use: it is not durable). */
  filename: string;
  /**
   * Commit with synchronous=NORMAL and fsync the WAL from libuv's thread pool (wal-syncer.ts):
   * writes are still acknowledged only once on disk, but the next group commit runs during the
   * previous one's fsync. Off: synchronous=FULL, the fsync inside COMMIT.
   */
  pipelinedSync?: boolean;
  /** With pipelinedSync: the fdatasync to use (tests hold syncs open with it). */
  walSync?: SyncFn;
  /** With pipelinedSync: when syncs may run on the calling thread (wal-syncer.ts). Default: defaultInlineSync, unless walSync is given. */
  inlineSync?: InlineSync;
  /**
   * One transaction per call instead of group commit (tests: the conformance suite must pass for
   * a store that commits per call). Each write commits before its call returns.
   */
  commitPerCall?: boolean;
  /**
   * Memory for the content of recently sent messages, which receives then don't read back from
   * the table (message-content-cache.ts). Default 32 MiB; 0 turns it off.
   */
  messageCacheBytes?: number;
  /** With pipelinedSync: how often to check whether the WAL file can be emptied (idle-wal-truncate.ts); 0: never on a timer. */
  walCheckMs?: number;
  /** With pipelinedSync: checkpoint the WAL on a worker thread, not in COMMITs (wal-checkpointer.ts). Default on; false: SQLite's own. */
  checkpointThread?: boolean | WalCheckpointerOptions;
  /** Told of each commit and WAL sync (the server's store metrics); not sent to a store thread. */
  telemetry?: SqliteTelemetry;
}

export interface SqliteTelemetry {
  committed(commit: { seconds: number; writes: number }): void;
  synced(seconds: number): void;
}

/** The page size a new database is made with. */
export const sqlitePageBytes = 8192;
/** How long a write waits for another connection's lock on the file. */
const busyTimeoutMs = 5000;

export class SqliteStore implements Store {
  readonly db: Database.Database;
  /** The schema migrations this open applied, in order (the server logs them). */
  readonly migrationsApplied: readonly string[];
  readonly writes: GroupCommitter;
  /** Shared with every other handle on this file in this process (shared-file.ts). */
  readonly notifier: Notifier;
  /** Group commit gathers a turn's writes into one transaction already. */
  readonly gathersTurns = false;
  private readonly syncer: WalSyncer | undefined;
  private readonly shared: SharedFile;
  private readonly receiver: SqliteReceiver;
  /** Puts a job message's body back from its job (kept-bodies.ts). */
  private readonly keptBody: ReturnType<typeof prepareKeptBody>;
  private readonly dedup: SqliteDedup;
  private readonly moveTasks: SqliteMoveTasks;
  /** Jobs and the webhook outbox (jobs-store.ts); the methods below delegate to it. */
  private readonly jobs: SqliteJobStore;
  private readonly schedules: SqliteSchedules;
  private readonly batches: SqliteBatches;
  private readonly blobs: SqliteBlobs;
  private readonly workers: SqliteWorkers;
  private readonly sql;
  private readonly messageCache: MessageContentCache;
  private readonly counts: SqliteQueueCounts;
  /** Each queue's kept message count and bytes, moved by every write that adds or deletes messages. */
  private readonly keptCounts: KeptCounts;
  /**
   * The messages of n seqs a delete batch deletes, for one receipt token (null: any), and only
   * while in flight at a time (null: whenever), read before the delete for the kept counts
   * (kept-counts.ts): one statement per delete batch instead of one per message. `+queue_id`
   * keeps the planner on the primary key.
   */
  private readonly deletableStatement: SizedStatements<{ seq: number; receipt_token: string | null; group_id: string | null; bytes: number }>;

  private readonly filename: string;
  /** Empties the WAL file when idle (pipelined-sync stores: the server's). */
  readonly walTruncate: IdleWalTruncate | undefined;
  /** Checkpoints the WAL on a worker thread (pipelined-sync stores). */
  readonly checkpointer: WalCheckpointer | undefined;

  constructor(options: SqliteStoreOptions) {
    this.filename = options.filename;
    this.db = new Database(options.filename);
    // A new database only (an existing one keeps its size): a 1 KiB message's row is a little over
    // 1 KiB, so 4 KiB pages hold three and waste most of a fourth; 8 KiB pages hold seven.
    this.db.pragma(`page_size = ${sqlitePageBytes}`);
    this.db.pragma("journal_mode = WAL");
    // FULL: the WAL is fsynced on every commit, so an acknowledged write survives power loss.
    // Pipelined: COMMIT only writes the WAL; the syncer fsyncs it before anyone is answered.
    this.db.pragma(options.pipelinedSync ? "synchronous = NORMAL" : "synchronous = FULL");
    this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    this.db.pragma("foreign_keys = ON");
    // Each operation of a group commit runs in a savepoint, whose statement journal would
    // otherwise be a temp file on disk (~150 extra writes per commit).
    this.db.pragma("temp_store = MEMORY");
    try {
      this.migrationsApplied = migrate(this.db);
    } catch (err) {
      this.db.close();
      throw err;
    }
    // An injected walSync (tests holding syncs open) goes through the pool every time.
    this.syncer = options.pipelinedSync
      ? new WalSyncer(`${options.filename}-wal`, options.walSync, options.walSync ? options.inlineSync : (options.inlineSync ?? defaultInlineSync))
      : undefined;
    this.writes = new GroupCommitter(this.db, this.syncer, options.commitPerCall === true);
    this.walTruncate = options.pipelinedSync ? new IdleWalTruncate(this.db, () => this.writes.group, busyTimeoutMs, options.walCheckMs) : undefined;
    const checkpointThread = options.checkpointThread ?? true;
    if (options.pipelinedSync && checkpointThread !== false && options.filename !== ":memory:") {
      const checkpointer = new WalCheckpointer(this.db, options.filename, () => this.writes.group, checkpointThread === true ? {} : checkpointThread);
      this.writes.holdWrites = () => checkpointer.holdWrites();
      this.checkpointer = checkpointer;
    }
    this.shared = attachSharedFile(options.filename);
    this.notifier = this.shared.notifier;
    if (options.telemetry) {
      const telemetry = options.telemetry;
      this.writes.onCommitted = (commit) => telemetry.committed(commit);
      if (this.syncer) this.syncer.onSynced = (seconds) => telemetry.synced(seconds);
    }
    this.messageCache = new MessageContentCache(options.messageCacheBytes ?? defaultMessageCacheBytes);
    this.deletableStatement = sizedStatements(
      this.db,
      (n) => `SELECT seq, receipt_token, group_id, ${keptBytesSql} AS bytes FROM messages
        WHERE seq IN (${marks(n)}) AND +queue_id = ? AND (? IS NULL OR receipt_token = ?) AND (? IS NULL OR visible_at_ms > ?)`,
    );
    this.keptCounts = new KeptCounts(this.db);
    const keptBody = prepareKeptBody(this.db);
    this.keptBody = keptBody;
    this.receiver = new SqliteReceiver(this.db, (row) => toMessage(keptBody(row)), this.keptCounts, this.messageCache);
    this.dedup = new SqliteDedup(this.db);
    this.counts = new SqliteQueueCounts(this.db, this.keptCounts);
    this.moveTasks = new SqliteMoveTasks(this.db, this.keptCounts);
    this.jobs = new SqliteJobStore(this.db, this.writes, this.shared.countedQueues, this.messageCache);
    this.schedules = new SqliteSchedules(this.db, this.writes, (items, nowMs) => this.jobs.createInWrite(items, nowMs));
    this.batches = new SqliteBatches(this.db, this.writes, (items, nowMs) => this.jobs.createInWrite(items, nowMs));
    this.blobs = new SqliteBlobs(this.db, this.writes);
    this.workers = new SqliteWorkers(this.db, this.writes);
    const db = this.db;
    // Through the ready indexes (every ungrouped message without a requirement; every one with)
    // and the visibility index of the rest: no index lists all of a queue's messages.
    const allMessagesOf = `FROM messages WHERE seq IN (
           SELECT seq FROM messages INDEXED BY messages_ready_ungrouped WHERE queue_id = ? AND group_id IS NULL AND req_class IS NULL
           UNION ALL SELECT seq FROM messages INDEXED BY messages_ready_classed WHERE queue_id = ? AND req_class IS NOT NULL
           UNION ALL SELECT seq FROM messages INDEXED BY messages_visible_other WHERE queue_id = ? AND group_id IS NOT NULL AND req_class IS NULL)`;
    this.sql = {
      secretInsert: db.prepare<[string, string]>("INSERT INTO server_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING"),
      secretGet: db.prepare<[string], string>("SELECT value FROM server_secrets WHERE name = ?").pluck(),
      queueByName: db.prepare<[string, string], QueueRow>("SELECT * FROM queues WHERE account = ? AND name = ?"),
      queueById: db.prepare<[number], QueueRow>("SELECT * FROM queues WHERE id = ?"),
      queueExists: prepareQueueExists(db),
      queueInsert: db.prepare("INSERT INTO queues (account, name, config, tags, created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?)"),
      queueUpdate: db.prepare<[string | null, string | null, number, number]>("UPDATE queues SET config = coalesce(?, config), tags = coalesce(?, tags), updated_at_ms = ? WHERE id = ?"),
      queueList: db.prepare<[{ account: string; after: string; prefix: string; limit: number }], QueueRow>(
        `SELECT * FROM queues WHERE account = @account AND name > @after AND substr(name, 1, length(@prefix)) = @prefix ORDER BY name ${boundLimit("@limit")}`,
      ),
      queueAccounts: db.prepare<[], string>("SELECT DISTINCT account FROM queues ORDER BY account").pluck(),
      queueCount: db.prepare<[string], number>("SELECT count(*) FROM queues WHERE account = ?").pluck(),
      queueHeld: db.prepare<[number], { messages: number; bytes: number }>("SELECT messages, bytes FROM queue_message_counts WHERE queue_id = ?"),
      queueDelete: db.prepare("DELETE FROM queues WHERE id = ?"),
      // jobs_queue_status: the live jobs only, however many finished ones the queue kept.
      liveJobIds: db.prepare<[number], string>("SELECT id FROM jobs WHERE queue_id = ? AND status IN ('waiting', 'queued', 'running')").pluck(),
      tombstoneUpsert: db.prepare(
        "INSERT INTO queue_tombstones (account, name, deleted_at_ms) VALUES (?, ?, ?) ON CONFLICT(account, name) DO UPDATE SET deleted_at_ms = excluded.deleted_at_ms",
      ),
      queuePurgedAt: db.prepare<[number], number | null>("SELECT purged_at_ms FROM queues WHERE id = ?").pluck(),
      queueSetPurgedAt: db.prepare<[number, number, number]>("UPDATE queues SET purged_at_ms = ?, updated_at_ms = ? WHERE id = ?"),
      tombstoneGet: db.prepare<[string, string], number>("SELECT deleted_at_ms FROM queue_tombstones WHERE account = ? AND name = ?").pluck(),
      // Read before a purge's DELETE, for the kept counts (kept-counts.ts).
      messagesHeldAll: db.prepare<[number, number, number], { messages: number; bytes: number }>(`SELECT count(*) AS messages, total(${keptBytesSql}) AS bytes ${allMessagesOf}`),
      messagesDeleteAll: db.prepare<[number, number, number]>(`DELETE ${allMessagesOf}`),
      messageInsert: prepareMessageInsert(db, this.keptCounts, this.messageCache),
      groupHeadVisibleAt: db.prepare<[number, string], number>(
        "SELECT visible_at_ms FROM messages INDEXED BY messages_group_seq WHERE queue_id = ? AND group_id = ? ORDER BY seq LIMIT 1",
      ).pluck(),
      // received_at_ms (migration 012): when the current lease began, null if never received.
      messageForReceipt: db.prepare<[number, number], LeaseState>(
        "SELECT receipt_token AS receiptToken, visible_at_ms AS visibleAtMs, received_at_ms AS receivedAtMs FROM messages WHERE seq = ? AND queue_id = ?",
      ),
      messageSetVisibility: db.prepare("UPDATE messages SET visible_at_ms = ? WHERE seq = ?"),
      messageInQueue: db.prepare<[number, number], number>("SELECT 1 FROM messages WHERE seq = ? AND queue_id = ?").pluck(),
      // The order moves (messageMove) read, one statement per visibility part (visible-order.ts).
      messagePeek: visibleParts.map((part) =>
        db.prepare<[number, number, number], MessageRow & { body_bytes: number | null }>(
          `SELECT * FROM ${part.from} WHERE queue_id = ? AND ${part.where} AND sent_at_ms >= ? ORDER BY visible_at_ms, seq ${boundLimit()}`,
        ),
      ),
      messageNextVisible: db
        .prepare<number[], number | null>(
          `SELECT min(v) FROM (${visibleParts
            .map((part) => `SELECT (SELECT min(visible_at_ms) FROM ${part.from} WHERE queue_id = ? AND ${part.where} AND visible_at_ms > ?) AS v`)
            .join(" UNION ALL ")})`,
        )
        .pluck(),
    };
  }

  async queueCreate(p: { account?: string; name: string; config: QueueConfig; tags: Record<string, string>; nowMs: number }): Promise<{ queue: QueueRecord; created: boolean }> {
    const account = p.account ?? "";
    return this.writes.run(() => {
      const existing = this.sql.queueByName.get(account, p.name);
      if (existing) return { queue: toQueue(existing), created: false };
      const info = this.sql.queueInsert.run(account, p.name, JSON.stringify(p.config), JSON.stringify(p.tags), p.nowMs, p.nowMs);
      return { queue: toQueue(this.sql.queueById.get(Number(info.lastInsertRowid))!), created: true };
    });
  }

  /** Not made to wait for a sync (settled): core reads queues for itself, and caches them. */
  async queueGet(p: { account?: string; name: string }): Promise<QueueRecord | undefined> {
    const row = this.sql.queueByName.get(p.account ?? "", p.name);
    return row ? toQueue(row) : undefined;
  }

  async queueList(p: { account?: string; prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]> {
    return this.settled(this.sql.queueList.all({ account: p.account ?? "", after: p.afterName ?? "", prefix: p.prefix ?? "", limit: p.limit }).map(toQueue));
  }

  async queueAccounts(): Promise<string[]> {
    return this.settled(this.sql.queueAccounts.all());
  }

  async queueCount(p: { account?: string }): Promise<number> {
    return this.settled(this.sql.queueCount.get(p.account ?? "") ?? 0);
  }

  async queueHeld(p: { queueId: number }): Promise<{ messages: number; bytes: number }> {
    return this.settled(this.sql.queueHeld.get(p.queueId) ?? { messages: 0, bytes: 0 });
  }

  async queueUpdate(p: { id: number; config?: QueueConfig; tags?: Record<string, string>; nowMs: number }): Promise<void> {
    await this.writes.run(() => this.sql.queueUpdate.run(p.config ? JSON.stringify(p.config) : null, p.tags ? JSON.stringify(p.tags) : null, p.nowMs, p.id));
  }

  async queueDelete(p: { id: number; nowMs: number }): Promise<QueueDeleted> {
    return this.writes.run((): QueueDeleted => {
      const row = this.sql.queueById.get(p.id);
      if (!row) return { liveJobIds: [] };
      // Read before the delete cascades to them (jobs.queue_id ON DELETE CASCADE).
      const liveJobIds = this.sql.liveJobIds.all(p.id);
      this.sql.messagesDeleteAll.run(p.id, p.id, p.id);
      this.messageCache.clear();
      this.sql.queueDelete.run(p.id);
      this.sql.tombstoneUpsert.run(row.account, row.name, p.nowMs);
      return { liveJobIds };
    });
  }

  async queueDeletedAt(p: { account?: string; name: string }): Promise<number | undefined> {
    return this.sql.tombstoneGet.get(p.account ?? "", p.name) ?? undefined;
  }

  /** Kept counts less the hidden and past-retention messages, walked by index (queue-counts.ts). */
  async queueStats(p: { queueId: number; nowMs: number; minSentAtMs: number }): Promise<QueueStats> {
    return this.settled(this.counts.stats(p));
  }

  /**
   * A consistent copy of the live database at `destination`, with SQLite's online backup API: a
   * few hundred pages per step, each step between event-loop turns, so requests keep being
   * served. Writes made meanwhile go through this same connection, so SQLite copies them into the
   * backup as they commit: the copy holds every write committed before it finished.
   */
  async backup(destination: string): Promise<{ pages: number }> {
    const { totalPages } = await this.db.backup(destination, { progress: () => backupPagesPerStep });
    return { pages: totalPages };
  }

  /** queueStats's counts; the head is the first visible entry of the visibility index (one seek). */
  async queueDepth(p: { queueId: number; nowMs: number; minSentAtMs: number }): Promise<QueueStats> {
    return this.settled(this.counts.stats({ ...p, head: true }));
  }

  /** Each call a write of its own (a savepoint in the group commit): one failing fails alone. */
  messageSendMany(p: { sends: MessageSendCall[] }): Promise<SendOutcome[]> {
    return Promise.all(p.sends.map((send) => this.writes.run(() => this.send(send))));
  }

  messageReceiveMany(p: { receives: MessageReceiveParams[] }): Promise<ReceiveResult[]> {
    return Promise.all(p.receives.map((receive) => this.writes.run(() => this.receiver.receive(receive))));
  }

  messageDeleteMany(p: { deletes: MessageDeleteCall[] }): Promise<DeleteResult[]> {
    return Promise.all(p.deletes.map((d) => this.writes.run(() => this.delete(d))));
  }

  private send(p: MessageSendCall): SendOutcome {
    const dedup = p.dedup;
    // The caller read the queue before this write's turn (queue-exists.ts): the rows would be
    // kept for a queue that is gone and the send answered as a success. One seek per send, not
    // per message.
    if (!this.sql.queueExists(p.queueId)) return "queueGone";
    // Only what the caller lacks (ids and seqs): echoing the messages back would cost a copy each.
    if (!dedup) {
      const seqs = this.sql.messageInsert.many(p.queueId, p.messages);
      return p.messages.map((m, i): SentMessage => ({ messageId: m.messageId, seq: seqs[i]! }));
    }
    this.dedup.expire(p.queueId, dedup.nowMs);
    return p.messages.map((m): SentMessage => {
      const original = this.dedup.find(p.queueId, dedup, m);
      if (original) return { messageId: original.message_id, seq: original.seq, duplicate: true };
      const seq = this.sql.messageInsert(p.queueId, m);
      this.dedup.record(p.queueId, dedup, m, seq);
      return { messageId: m.messageId, seq };
    });
  }

  private delete(p: MessageDeleteCall): DeleteResult {
    const nowMs = p.nowMs;
    if (p.refuseExpired && nowMs === undefined) throw new Error("messageDelete: refuseExpired needs nowMs");
    const inFlightAtMs = p.refuseExpired ? nowMs! : null;
    const removed = new Map<number, string | null>();
    const groups = new Set<string>();
    for (const [token, seqs] of seqsByToken(p.receipts, (r) => (p.anyReceipt ? "" : r.token))) {
      const mustMatch = p.anyReceipt ? null : token;
      for (let i = 0; i < seqs.length; i += deleteChunk) {
        const chunk = seqs.slice(i, i + deleteChunk);
        const found: number[] = [];
        let bytes = 0;
        for (const row of this.deletableStatement(chunk.length).all(...chunk, p.queueId, mustMatch, mustMatch, inFlightAtMs, inFlightAtMs)) {
          found.push(row.seq);
          bytes += row.bytes;
          removed.set(row.seq, row.receipt_token);
          this.messageCache.forget(row.seq);
          if (nowMs !== undefined && row.group_id !== null) groups.add(row.group_id);
        }
        this.keptCounts.deleteOf(p.queueId, found, bytes);
      }
    }
    const deleted = receiptsDeleted(p.receipts, removed, p.anyReceipt);
    let groupsReady = 0;
    for (const group of groups) {
      const headVisibleAt = this.sql.groupHeadVisibleAt.get(p.queueId, group);
      if (headVisibleAt !== undefined && headVisibleAt <= nowMs!) groupsReady++;
    }
    if (!p.refuseExpired) return { deleted, groupsReady };
    // A receipt that deleted nothing while its message is still here: its lease has ended (the
    // token matched but the message is visible again, or it was received again since). Looked up
    // only for the receipts that failed, after every delete of the batch ran.
    const expired = p.receipts.map((r, i) => !deleted[i] && this.sql.messageInQueue.get(r.seq, p.queueId) !== undefined);
    return { deleted, groupsReady, expired };
  }

  async messageChangeVisibility(p: { queueId: number; nowMs: number; maxLeaseMs?: number; anyReceipt?: boolean; entries: Array<ReceiptRef & { visibleAtMs: number }> }): Promise<VisibilityChangeResult[]> {
    return this.writes.run(() =>
      p.entries.map((e) => {
        const result = visibilityChangeOf(p, e, this.sql.messageForReceipt.get(e.seq, p.queueId));
        if (result === "changed") this.sql.messageSetVisibility.run(e.visibleAtMs, e.seq);
        return result;
      }),
    );
  }

  async messagePeek(p: { queueId: number; minSentAtMs: number; limit: number }): Promise<StoredMessage[]> {
    const rows = mergeVisible(
      this.sql.messagePeek.map((peek) => peek.all(p.queueId, p.minSentAtMs, p.limit)),
      mergeLimit(p.limit),
    );
    return this.settled(rows.map((row) => toMessage(this.keptBody(row))));
  }

  async messageNextVisibleAt(p: { queueId: number; nowMs: number }): Promise<number | undefined> {
    return this.sql.messageNextVisible.get(...perPart(p.queueId, p.nowMs)) ?? undefined;
  }

  async messagePurge(p: { queueId: number; nowMs: number; refuseIfPurgedAfterMs?: number }): Promise<MessagesDeleted | undefined> {
    return this.writes.run((): MessagesDeleted | undefined => {
      if (p.refuseIfPurgedAfterMs !== undefined) {
        const purgedAtMs = this.sql.queuePurgedAt.get(p.queueId);
        if (purgedAtMs != null && purgedAtMs > p.refuseIfPurgedAfterMs) return undefined;
        this.sql.queueSetPurgedAt.run(p.nowMs, p.nowMs, p.queueId);
      }
      const jobChanges = this.jobs.endJobsOfMessages({ queueId: p.queueId, beforeSentAtMs: Number.MAX_SAFE_INTEGER, nowMs: p.nowMs, reason: "purged", limit: -1 });
      this.messageCache.clear();
      const held = this.sql.messagesHeldAll.get(p.queueId, p.queueId, p.queueId)!;
      const deleted = this.sql.messagesDeleteAll.run(p.queueId, p.queueId, p.queueId).changes;
      this.keptCounts.removed(p.queueId, deleted, held.bytes);
      return { deleted, jobChanges };
    });
  }

  async messageExpire(p: { queueId: number; minSentAtMs: number; nowMs: number; limit?: number }): Promise<MessagesDeleted> {
    const limit = p.limit === undefined ? -1 : p.limit; // -1: no limit
    return this.writes.run((): MessagesDeleted => {
      const jobChanges = this.jobs.endJobsOfMessages({ queueId: p.queueId, beforeSentAtMs: p.minSentAtMs, nowMs: p.nowMs, reason: "expired", limit });
      const deleted = this.counts.expire(p.queueId, p.minSentAtMs, limit);
      if (deleted > 0) this.messageCache.clear();
      return { deleted, jobChanges };
    });
  }

  // ---- move tasks (move-tasks.ts): each call one write, or a read ----
  messageMove: Store["messageMove"] = (p) => this.writes.run(() => this.moveTasks.move(p));
  moveTaskCreate: Store["moveTaskCreate"] = (p) => this.writes.run(() => this.moveTasks.create(p.task));
  moveTaskGet: Store["moveTaskGet"] = (p) => this.settled(this.moveTasks.get(p.taskHandle));
  moveTaskList: Store["moveTaskList"] = (p) => this.settled(this.moveTasks.list(p));
  moveTaskUpdate: Store["moveTaskUpdate"] = (p) => this.writes.run(() => this.moveTasks.update(p));

  // ---- jobs (jobs-store.ts) ----
  jobCreateMany: Store["jobCreateMany"] = (p) => this.jobs.jobCreateMany(p);
  jobGet: Store["jobGet"] = async (p) => this.settled(await this.jobs.jobGet(p));
  jobOutputAppend: Store["jobOutputAppend"] = (p) => this.jobs.outputs.jobOutputAppend(p);
  jobOutputRead: Store["jobOutputRead"] = async (p) => this.settled(await this.jobs.outputs.jobOutputRead(p));
  jobList: Store["jobList"] = async (p) => this.settled(await this.jobs.jobList(p));
  jobCountByStatus: Store["jobCountByStatus"] = async (p) => this.settled(await this.jobs.jobCountByStatus(p));
  jobLease: Store["jobLease"] = (p) => this.jobs.jobLease(p);
  jobTransitionMany: Store["jobTransitionMany"] = (p) => this.jobs.jobTransitionMany(p);
  jobRetry: Store["jobRetry"] = (p) => this.jobs.jobRetry(p);
  jobListExpired: Store["jobListExpired"] = (p) => this.jobs.jobListExpired(p);
  jobPrune: Store["jobPrune"] = (p) => this.jobs.jobPrune(p);
  jobQueueSettingsGet: Store["jobQueueSettingsGet"] = (p) => this.jobs.jobQueueSettingsGet(p);
  jobQueueSettingsPut: Store["jobQueueSettingsPut"] = (p) => this.jobs.jobQueueSettingsPut(p);
  webhookDeliveryClaim: Store["webhookDeliveryClaim"] = (p) => this.jobs.outbox.webhookDeliveryClaim(p);
  webhookDeliveryNextDueAt: Store["webhookDeliveryNextDueAt"] = () => this.jobs.outbox.webhookDeliveryNextDueAt();
  webhookDeliveryRecord: Store["webhookDeliveryRecord"] = (p) => this.jobs.outbox.webhookDeliveryRecord(p);
  webhookDeliveryList: Store["webhookDeliveryList"] = async (p) => this.settled(await this.jobs.outbox.webhookDeliveryList(p));

  // ---- the job event log (event-log.ts): no event is shown before it is on disk ----
  // The list needs no sync of its own: it stops below the first event not yet synced.
  jobEventList: Store["jobEventList"] = (p) => this.jobs.eventLog.jobEventList(p);
  jobEventBounds: Store["jobEventBounds"] = async () => this.settled(await this.jobs.eventLog.jobEventBounds());
  jobEventPrune: Store["jobEventPrune"] = (p) => this.jobs.eventLog.jobEventPrune(p);

  // ---- blobs (blobs-store.ts) ----
  blobCreate: Store["blobCreate"] = (p) => this.blobs.blobCreate(p);
  blobGet: Store["blobGet"] = async (p) => this.settled(await this.blobs.blobGet(p));
  blobMarkUploaded: Store["blobMarkUploaded"] = (p) => this.blobs.blobMarkUploaded(p);
  blobAttach: Store["blobAttach"] = (p) => this.blobs.blobAttach(p);
  blobDetach: Store["blobDetach"] = (p) => this.blobs.blobDetach(p);
  blobListDue: Store["blobListDue"] = async (p) => this.settled(await this.blobs.blobListDue(p));
  blobKeep: Store["blobKeep"] = (p) => this.blobs.blobKeep(p);
  blobDelete: Store["blobDelete"] = (p) => this.blobs.blobDelete(p);
  blobBytes: Store["blobBytes"] = async (p) => this.settled(await this.blobs.blobBytes(p));

  // ---- files and batches (batches-store.ts) ----
  fileCreate: Store["fileCreate"] = (p) => this.batches.fileCreate(p);
  fileChunkWrite: Store["fileChunkWrite"] = (p) => this.batches.fileChunkWrite(p);
  fileUpdate: Store["fileUpdate"] = (p) => this.batches.fileUpdate(p);
  fileGet: Store["fileGet"] = async (p) => this.settled(await this.batches.fileGet(p));
  fileChunkRead: Store["fileChunkRead"] = async (p) => this.settled(await this.batches.fileChunkRead(p));
  fileDelete: Store["fileDelete"] = (p) => this.batches.fileDelete(p);
  batchCreate: Store["batchCreate"] = (p) => this.batches.batchCreate(p);
  batchGet: Store["batchGet"] = async (p) => this.settled(await this.batches.batchGet(p));
  batchList: Store["batchList"] = async (p) => this.settled(await this.batches.batchList(p));
  batchWrite: Store["batchWrite"] = (p) => this.batches.batchWrite(p);
  batchListActive: Store["batchListActive"] = async (p) => this.settled(await this.batches.batchListActive(p));
  batchSubmit: Store["batchSubmit"] = (p) => this.batches.batchSubmit(p);
  batchJobCounts: Store["batchJobCounts"] = async (p) => this.settled(await this.batches.batchJobCounts(p));
  batchJobRows: Store["batchJobRows"] = async (p) => this.settled(await this.batches.batchJobRows(p));

  // ---- schedules (schedules-store.ts) ----
  scheduleGet: Store["scheduleGet"] = async (p) => this.settled(await this.schedules.scheduleGet(p));
  scheduleList: Store["scheduleList"] = async (p) => this.settled(await this.schedules.scheduleList(p));
  scheduleWrite: Store["scheduleWrite"] = (p) => this.schedules.scheduleWrite(p);
  scheduleDelete: Store["scheduleDelete"] = (p) => this.schedules.scheduleDelete(p);
  scheduleListDue: Store["scheduleListDue"] = async (p) => this.settled(await this.schedules.scheduleListDue(p));
  scheduleNextDueAt: Store["scheduleNextDueAt"] = async () => this.settled(await this.schedules.scheduleNextDueAt());
  scheduleFire: Store["scheduleFire"] = (p) => this.schedules.scheduleFire(p);

  // ---- workers (workers-store.ts) ----
  workerUpsertMany: Store["workerUpsertMany"] = (p) => this.workers.workerUpsertMany(p);
  workerList: Store["workerList"] = async (p) => this.settled(await this.workers.workerList(p));
  workerPrune: Store["workerPrune"] = (p) => this.workers.workerPrune(p);

  async secretGetOrCreate(p: { name: string; candidate: string }): Promise<string> {
    return this.writes.run(() => {
      this.sql.secretInsert.run(p.name, p.candidate);
      return this.sql.secretGet.get(p.name)!;
    });
  }

  /**
   * A read a client sees, answered once everything committed so far is on disk (with pipelined
   * syncs a commit is visible before its fsync ends): no answer shows a write a crash could still
   * take back. Reads the server makes for itself — queue records on every request, the next
   * visibility expiry, sweeps — don't wait; the writes they lead to wait for their own sync.
   */
  private async settled<T>(value: T): Promise<T> {
    await this.writes.durable();
    return value;
  }

  async close(): Promise<void> {
    this.walTruncate?.close();
    this.writes.close();
    await this.checkpointer?.close();
    this.db.close();
    this.syncer?.close();
    detachSharedFile(this.filename);
  }
}

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}
