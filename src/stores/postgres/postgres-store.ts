/**
 * The PostgreSQL store: any number of stateless Sluice nodes on one database. Every write is one
 * statement or one transaction, committed before it is answered (the database's own durability:
 * synchronous_commit decides when that is on disk). Nothing a node holds in memory is needed by
 * another: decisions that must hold across nodes are made by row locks and constraints.
 */
import type { StoredMessage } from "../../core/message.js";
import type { QueueConfig, QueueRecord } from "../../core/queue.js";
import type { DeleteResult, MessageDeleteCall, MessageReceiveParams, MessageSendCall, MessagesDeleted, QueueDeleted, QueueStats, ReceiptRef, ReceiveResult, SendOutcome, Store, VisibilityChangeResult } from "../../core/store.js";
import type { Db, NamedStatement } from "./db.js";
import { PostgresJobOutputs } from "./job-outputs.js";
import { PostgresWebhookOutbox } from "./webhook-outbox.js";
import { PostgresJobStore, createJobsInTx } from "./jobs-store.js";
import type { PostgresNotifier } from "./notifier.js";
import { PostgresEventLog } from "./event-log.js";
import { PostgresSchedules } from "./schedules.js";
import { PostgresBatches } from "./batches.js";
import { PostgresBlobs } from "./blobs.js";
import { PostgresWorkers } from "./workers.js";
import { settleGroups } from "./message-insert.js";
import { sendMany } from "./send.js";
import { messageMove, moveTaskCreate, moveTaskGet, moveTaskList, moveTaskUpdate } from "./move-tasks.js";
import { type LeaseState, queueStatsOf, visibilityChangeOf } from "../../core/message-rules.js";
import { deleteMany } from "./delete.js";
import { receiveMany } from "./receive.js";
import { type MessageRow, toMessage } from "../codecs/message-row.js";
import { type QueueRow, toQueue } from "../codecs/queue-row.js";

const statsStatement: NamedStatement = {
  name: "sluice_queue_stats",
  text: `SELECT (SELECT coalesce(sum(messages), 0)::bigint FROM queue_message_counts WHERE queue_id = $1) AS total,
            h.in_flight, h.delayed,
            (SELECT count(*) FROM messages WHERE queue_id = $1 AND sent_at_ms < $3) AS expired,
            (SELECT sent_at_ms FROM messages WHERE queue_id = $1 AND sent_at_ms >= $3 AND visible_at_ms <= $2 ORDER BY sent_at_ms LIMIT 1) AS oldest
     FROM (SELECT count(*) FILTER (WHERE receive_count > 0) AS in_flight, count(*) FILTER (WHERE receive_count = 0) AS delayed
           FROM messages WHERE queue_id = $1 AND visible_at_ms > $2 AND sent_at_ms >= $3) AS h`,
};

/** Asked by empty long polls the receive didn't answer (queues with groups, job leases). */
const nextVisibleStatement: NamedStatement = { name: "sluice_next_visible", text: "SELECT min(visible_at_ms) AS at FROM messages WHERE queue_id = $1 AND visible_at_ms > $2" };

export class PostgresStore implements Store {
  /** Jobs and the webhook outbox (jobs-store.ts); the methods below delegate to it. */
  private readonly jobs: PostgresJobStore;
  private readonly outputs: PostgresJobOutputs;
  private readonly outbox: PostgresWebhookOutbox;
  private readonly eventLog: PostgresEventLog;
  private readonly schedules: PostgresSchedules;
  private readonly batches: PostgresBatches;
  private readonly blobs: PostgresBlobs;
  private readonly workers: PostgresWorkers;
  /** The latest secretGetOrCreate call: the next one starts when it has ended. */
  private secretCalls: Promise<unknown> = Promise.resolve();

  /** Notices reach this node's subscribers at once and the other nodes' over LISTEN/NOTIFY (notifier.ts). */
  constructor(
    readonly db: Db,
    readonly notifier: PostgresNotifier,
  ) {
    this.jobs = new PostgresJobStore(db);
    this.outputs = new PostgresJobOutputs(db);
    this.outbox = new PostgresWebhookOutbox(db);
    this.eventLog = new PostgresEventLog(db);
    this.schedules = new PostgresSchedules(db, createJobsInTx);
    this.batches = new PostgresBatches(db, createJobsInTx);
    this.blobs = new PostgresBlobs(db);
    this.workers = new PostgresWorkers(db);
  }

  async queueCreate(p: { account?: string; name: string; config: QueueConfig; tags: Record<string, string>; nowMs: number }): Promise<{ queue: QueueRecord; created: boolean }> {
    const inserted = await this.db.query<QueueRow>(
      `INSERT INTO queues (account, name, config, tags, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $5)
       ON CONFLICT (account, name) DO NOTHING RETURNING *`,
      [p.account ?? "", p.name, JSON.stringify(p.config), JSON.stringify(p.tags), p.nowMs],
    );
    if (inserted.rows[0]) return { queue: toQueue(inserted.rows[0]), created: true };
    const existing = await this.queueGet({ account: p.account, name: p.name });
    // Deleted between the two statements: try again (the name is free now).
    if (!existing) return this.queueCreate(p);
    return { queue: existing, created: false };
  }

  async queueGet(p: { account?: string; name: string }): Promise<QueueRecord | undefined> {
    const { rows } = await this.db.query<QueueRow>("SELECT * FROM queues WHERE account = $1 AND name = $2", [p.account ?? "", p.name]);
    return rows[0] ? toQueue(rows[0]) : undefined;
  }

  async queueList(p: { account?: string; prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]> {
    const { rows } = await this.db.query<QueueRow>(
      "SELECT * FROM queues WHERE account = $1 AND name > $2 AND starts_with(name, $3) ORDER BY name LIMIT $4",
      [p.account ?? "", p.afterName ?? "", p.prefix ?? "", p.limit],
    );
    return rows.map(toQueue);
  }

  async queueAccounts(): Promise<string[]> {
    const { rows } = await this.db.query<{ account: string }>("SELECT DISTINCT account FROM queues ORDER BY account");
    return rows.map((r) => r.account);
  }

  async queueCount(p: { account?: string }): Promise<number> {
    const { rows } = await this.db.query<{ n: number }>("SELECT count(*)::int AS n FROM queues WHERE account = $1", [p.account ?? ""]);
    return rows[0]?.n ?? 0;
  }

  /** The queue's delta rows summed (migrations 013 and 021); upkeep keeps them few. */
  async queueHeld(p: { queueId: number }): Promise<{ messages: number; bytes: number }> {
    const { rows } = await this.db.query<{ messages: number; bytes: number }>(
      "SELECT coalesce(sum(messages), 0)::float8 AS messages, coalesce(sum(bytes), 0)::float8 AS bytes FROM queue_message_counts WHERE queue_id = $1",
      [p.queueId],
    );
    return rows[0] ?? { messages: 0, bytes: 0 };
  }

  async queueUpdate(p: { id: number; config?: QueueConfig; tags?: Record<string, string>; nowMs: number }): Promise<void> {
    await this.db.query("UPDATE queues SET config = coalesce($2, config), tags = coalesce($3, tags), updated_at_ms = $4 WHERE id = $1", [
      p.id,
      p.config ? JSON.stringify(p.config) : null,
      p.tags ? JSON.stringify(p.tags) : null,
      p.nowMs,
    ]);
  }

  async queueDelete(p: { id: number; nowMs: number }): Promise<QueueDeleted> {
    return this.db.transaction(async (tx): Promise<QueueDeleted> => {
      const { rows } = await tx.query<{ account: string; name: string }>("SELECT account, name FROM queues WHERE id = $1 FOR UPDATE", [p.id]);
      if (!rows[0]) return { liveJobIds: [] };
      const live = await tx.query<{ id: string }>("SELECT id FROM jobs WHERE queue_id = $1 AND status IN ('waiting', 'queued', 'running')", [p.id]);
      // Finished deliveries go with their jobs; pending ones stay to be delivered (they carry a snapshot).
      await tx.query("DELETE FROM webhook_outbox WHERE status <> 'pending' AND job_id IN (SELECT id FROM jobs WHERE queue_id = $1)", [p.id]);
      // Messages, groups, dedup ids, attempts, jobs and settings cascade from the queue; its count
      // rows (the cascade's own delta among them) go after.
      await tx.query("DELETE FROM queues WHERE id = $1", [p.id]);
      await tx.query("DELETE FROM queue_message_counts WHERE queue_id = $1", [p.id]);
      await tx.query(
        "INSERT INTO queue_tombstones (account, name, deleted_at_ms) VALUES ($1, $2, $3) ON CONFLICT (account, name) DO UPDATE SET deleted_at_ms = excluded.deleted_at_ms",
        [rows[0].account, rows[0].name, p.nowMs],
      );
      return { liveJobIds: live.rows.map((r) => r.id) };
    });
  }

  async queueDeletedAt(p: { account?: string; name: string }): Promise<number | undefined> {
    const { rows } = await this.db.query<{ deleted_at_ms: number }>("SELECT deleted_at_ms FROM queue_tombstones WHERE account = $1 AND name = $2", [p.account ?? "", p.name]);
    return rows[0]?.deleted_at_ms;
  }

  /**
   * The queue's count (migration 013's delta rows) less its hidden messages (messages_visible
   * from now on) and those past retention (messages_sent up to it), in one snapshot: the walks
   * are of the usually few hidden and expired messages, never the visible backlog.
   */
  async queueStats(p: { queueId: number; nowMs: number; minSentAtMs: number }): Promise<QueueStats> {
    const { rows } = await this.db.query<{ total: number; in_flight: number; delayed: number; expired: number; oldest: number | null }>(statsStatement, [p.queueId, p.nowMs, p.minSentAtMs]);
    const r = rows[0]!;
    return queueStatsOf({ total: r.total, inFlight: r.in_flight, delayed: r.delayed, expired: r.expired, oldestSentAtMs: r.oldest });
  }

  /** queueStats is as cheap. */
  queueDepth: Store["queueDepth"] = (p) => this.queueStats(p);

  /** Core hands this store one turn's sends, receives and deletes together: one statement each (send.ts, receive.ts, delete.ts). */
  readonly gathersTurns = true;

  messageSendMany(p: { sends: MessageSendCall[] }): Promise<SendOutcome[]> {
    return sendMany(this.db, p.sends);
  }

  messageReceiveMany(p: { receives: MessageReceiveParams[] }): Promise<ReceiveResult[]> {
    return receiveMany(this.db, p.receives);
  }

  messageDeleteMany(p: { deletes: MessageDeleteCall[] }): Promise<DeleteResult[]> {
    return deleteMany(this.db, p.deletes);
  }

  async messageChangeVisibility(p: { queueId: number; nowMs: number; maxLeaseMs?: number; anyReceipt?: boolean; entries: Array<ReceiptRef & { visibleAtMs: number }> }): Promise<VisibilityChangeResult[]> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<LeaseState & { seq: number }>(
        `SELECT seq, receipt_token AS "receiptToken", visible_at_ms AS "visibleAtMs", received_at_ms AS "receivedAtMs" FROM messages
         WHERE queue_id = $1 AND seq = ANY ($2::bigint[]) ORDER BY seq FOR UPDATE`,
        [p.queueId, p.entries.map((e) => e.seq)],
      );
      const bySeq = new Map(rows.map((r) => [r.seq, r]));
      const changes = new Map<number, number>();
      // Entries apply in order, each seeing what the ones before it did.
      const results = p.entries.map((e) => {
        const row = bySeq.get(e.seq);
        const result = visibilityChangeOf(p, e, row);
        if (result === "changed") changes.set(e.seq, (row!.visibleAtMs = e.visibleAtMs));
        return result;
      });
      if (changes.size > 0) {
        await tx.query("UPDATE messages m SET visible_at_ms = c.v FROM unnest($1::bigint[], $2::bigint[]) AS c (seq, v) WHERE m.seq = c.seq", [
          [...changes.keys()],
          [...changes.values()],
        ]);
      }
      return results;
    });
  }

  /** The order a move task reads (messages_visible); a read only: nothing about the messages changes. */
  async messagePeek(p: { queueId: number; minSentAtMs: number; limit: number }): Promise<StoredMessage[]> {
    const { rows } = await this.db.query<MessageRow>("SELECT * FROM messages WHERE queue_id = $1 AND sent_at_ms >= $2 ORDER BY visible_at_ms, seq LIMIT $3", [
      p.queueId,
      p.minSentAtMs,
      p.limit,
    ]);
    return rows.map(toMessage);
  }

  async messageNextVisibleAt(p: { queueId: number; nowMs: number }): Promise<number | undefined> {
    const { rows } = await this.db.query<{ at: number | null }>(nextVisibleStatement, [p.queueId, p.nowMs]);
    return rows[0]?.at ?? undefined;
  }

  async messagePurge(p: { queueId: number; nowMs: number; refuseIfPurgedAfterMs?: number }): Promise<MessagesDeleted | undefined> {
    const groups: string[] = [];
    const result = await this.db.transaction(async (tx): Promise<MessagesDeleted | undefined> => {
      groups.length = 0;
      if (p.refuseIfPurgedAfterMs !== undefined) {
        // The queue row's lock makes check-and-purge one step: concurrent purges can't both pass.
        const { rows } = await tx.query<{ purged_at_ms: number | null }>("SELECT purged_at_ms FROM queues WHERE id = $1 FOR UPDATE", [p.queueId]);
        const purgedAtMs = rows[0]?.purged_at_ms;
        if (purgedAtMs != null && purgedAtMs > p.refuseIfPurgedAfterMs) return undefined;
        await tx.query("UPDATE queues SET purged_at_ms = $2, updated_at_ms = $2 WHERE id = $1", [p.queueId, p.nowMs]);
      }
      const jobChanges = await this.jobs.endJobsOfMessages(tx, { queueId: p.queueId, beforeSentAtMs: Number.MAX_SAFE_INTEGER, nowMs: p.nowMs, reason: "purged" });
      // Counted and grouped in the database: a deep queue's rows never come back to this process.
      const { rows } = await tx.query<{ deleted: number; groups: string[] }>(
        `WITH gone AS (DELETE FROM messages WHERE queue_id = $1 RETURNING group_id)
         SELECT count(*) AS deleted, coalesce(array_agg(DISTINCT group_id) FILTER (WHERE group_id IS NOT NULL), '{}') AS groups FROM gone`,
        [p.queueId],
      );
      groups.push(...rows[0]!.groups);
      return { deleted: rows[0]!.deleted, jobChanges };
    });
    await settleGroups(this.db, p.queueId, groups);
    return result;
  }

  /**
   * The slice is locked first (oldest first, by messages_sent), so the jobs ended and the
   * messages deleted are the same ones; rows another transaction holds wait for the next pass.
   */
  async messageExpire(p: { queueId: number; minSentAtMs: number; nowMs: number; limit?: number }): Promise<MessagesDeleted> {
    // Upkeep comes here for every queue on every pass: the queue's count rows fold into one.
    await this.db.query("SELECT sluice_counts_fold($1)", [p.queueId]);
    const groups: string[] = [];
    const result = await this.db.transaction(async (tx): Promise<MessagesDeleted> => {
      groups.length = 0;
      const slice = await tx.query<{ seq: number }>(
        "SELECT seq FROM messages WHERE queue_id = $1 AND sent_at_ms < $2 ORDER BY sent_at_ms LIMIT $3 FOR UPDATE SKIP LOCKED",
        [p.queueId, p.minSentAtMs, p.limit ?? null],
      );
      if (slice.rows.length === 0) return { deleted: 0, jobChanges: [] };
      const seqs = slice.rows.map((r) => r.seq);
      const jobChanges = await this.jobs.endJobsOfMessages(tx, { queueId: p.queueId, seqs, nowMs: p.nowMs, reason: "expired" });
      const { rows } = await tx.query<{ group_id: string | null }>("DELETE FROM messages WHERE seq = ANY ($2::bigint[]) AND queue_id = $1 RETURNING group_id", [p.queueId, seqs]);
      for (const r of rows) if (r.group_id !== null) groups.push(r.group_id);
      return { deleted: rows.length, jobChanges };
    });
    await settleGroups(this.db, p.queueId, groups);
    return result;
  }

  // ---- move tasks (move-tasks.ts) ----
  messageMove: Store["messageMove"] = (p) => messageMove(this.db, p);
  moveTaskCreate: Store["moveTaskCreate"] = (p) => moveTaskCreate(this.db, p.task);
  moveTaskGet: Store["moveTaskGet"] = (p) => moveTaskGet(this.db, p.taskHandle);
  moveTaskList: Store["moveTaskList"] = (p) => moveTaskList(this.db, p);
  moveTaskUpdate: Store["moveTaskUpdate"] = (p) => moveTaskUpdate(this.db, p);

  // ---- jobs (jobs-store.ts) ----
  jobCreateMany: Store["jobCreateMany"] = (p) => this.jobs.jobCreateMany(p);
  jobGet: Store["jobGet"] = (p) => this.jobs.jobGet(p);
  jobList: Store["jobList"] = (p) => this.jobs.jobList(p);
  jobCountByStatus: Store["jobCountByStatus"] = (p) => this.jobs.jobCountByStatus(p);
  jobLease: Store["jobLease"] = (p) => this.jobs.jobLease(p);
  jobTransitionMany: Store["jobTransitionMany"] = (p) => this.jobs.jobTransitionMany(p);
  jobOutputAppend: Store["jobOutputAppend"] = (p) => this.outputs.jobOutputAppend(p);
  jobOutputRead: Store["jobOutputRead"] = (p) => this.outputs.jobOutputRead(p);
  jobRetry: Store["jobRetry"] = (p) => this.jobs.jobRetry(p);
  jobListExpired: Store["jobListExpired"] = (p) => this.jobs.jobListExpired(p);
  jobPrune: Store["jobPrune"] = (p) => this.jobs.jobPrune(p);
  jobQueueSettingsGet: Store["jobQueueSettingsGet"] = (p) => this.jobs.jobQueueSettingsGet(p);
  jobQueueSettingsPut: Store["jobQueueSettingsPut"] = (p) => this.jobs.jobQueueSettingsPut(p);
  webhookDeliveryClaim: Store["webhookDeliveryClaim"] = (p) => this.outbox.webhookDeliveryClaim(p);
  webhookDeliveryNextDueAt: Store["webhookDeliveryNextDueAt"] = () => this.outbox.webhookDeliveryNextDueAt();
  webhookDeliveryRecord: Store["webhookDeliveryRecord"] = (p) => this.outbox.webhookDeliveryRecord(p);
  webhookDeliveryList: Store["webhookDeliveryList"] = (p) => this.outbox.webhookDeliveryList(p);

  /**
   * This node's calls one after another: the first call's candidate wins here, as the contract
   * says (two pooled connections could otherwise commit the later call's insert first).
   */
  secretGetOrCreate(p: { name: string; candidate: string }): Promise<string> {
    const result = this.secretCalls.then(async () => {
      await this.db.query("INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", [p.name, p.candidate]);
      // A statement of its own: it sees the row of a node whose insert won the race and committed.
      const { rows } = await this.db.query<{ value: string }>("SELECT value FROM server_secrets WHERE name = $1", [p.name]);
      return rows[0]!.value;
    });
    this.secretCalls = result.catch(() => undefined);
    return result;
  }

  // ---- blobs (blobs.ts) ----
  blobCreate: Store["blobCreate"] = (p) => this.blobs.blobCreate(p);
  blobGet: Store["blobGet"] = (p) => this.blobs.blobGet(p);
  blobMarkUploaded: Store["blobMarkUploaded"] = (p) => this.blobs.blobMarkUploaded(p);
  blobAttach: Store["blobAttach"] = (p) => this.blobs.blobAttach(p);
  blobDetach: Store["blobDetach"] = (p) => this.blobs.blobDetach(p);
  blobListDue: Store["blobListDue"] = (p) => this.blobs.blobListDue(p);
  blobKeep: Store["blobKeep"] = (p) => this.blobs.blobKeep(p);
  blobDelete: Store["blobDelete"] = (p) => this.blobs.blobDelete(p);
  blobBytes: Store["blobBytes"] = (p) => this.blobs.blobBytes(p);

  // ---- files and batches (batches.ts) ----
  fileCreate: Store["fileCreate"] = (p) => this.batches.fileCreate(p);
  fileChunkWrite: Store["fileChunkWrite"] = (p) => this.batches.fileChunkWrite(p);
  fileUpdate: Store["fileUpdate"] = (p) => this.batches.fileUpdate(p);
  fileGet: Store["fileGet"] = (p) => this.batches.fileGet(p);
  fileChunkRead: Store["fileChunkRead"] = (p) => this.batches.fileChunkRead(p);
  fileDelete: Store["fileDelete"] = (p) => this.batches.fileDelete(p);
  batchCreate: Store["batchCreate"] = (p) => this.batches.batchCreate(p);
  batchGet: Store["batchGet"] = (p) => this.batches.batchGet(p);
  batchList: Store["batchList"] = (p) => this.batches.batchList(p);
  batchWrite: Store["batchWrite"] = (p) => this.batches.batchWrite(p);
  batchListActive: Store["batchListActive"] = (p) => this.batches.batchListActive(p);
  batchSubmit: Store["batchSubmit"] = (p) => this.batches.batchSubmit(p);
  batchJobCounts: Store["batchJobCounts"] = (p) => this.batches.batchJobCounts(p);
  batchJobRows: Store["batchJobRows"] = (p) => this.batches.batchJobRows(p);

  // ---- the job event log (event-log.ts) and schedules (schedules.ts) ----
  jobEventList: Store["jobEventList"] = (p) => this.eventLog.jobEventList(p);
  jobEventBounds: Store["jobEventBounds"] = () => this.eventLog.jobEventBounds();
  jobEventPrune: Store["jobEventPrune"] = (p) => this.eventLog.jobEventPrune(p);
  scheduleGet: Store["scheduleGet"] = (p) => this.schedules.scheduleGet(p);
  scheduleList: Store["scheduleList"] = (p) => this.schedules.scheduleList(p);
  scheduleWrite: Store["scheduleWrite"] = (p) => this.schedules.scheduleWrite(p);
  scheduleDelete: Store["scheduleDelete"] = (p) => this.schedules.scheduleDelete(p);
  scheduleListDue: Store["scheduleListDue"] = (p) => this.schedules.scheduleListDue(p);
  workerUpsertMany: Store["workerUpsertMany"] = (p) => this.workers.workerUpsertMany(p);
  workerList: Store["workerList"] = (p) => this.workers.workerList(p);
  workerPrune: Store["workerPrune"] = (p) => this.workers.workerPrune(p);
  scheduleNextDueAt: Store["scheduleNextDueAt"] = () => this.schedules.scheduleNextDueAt();
  scheduleFire: Store["scheduleFire"] = (p) => this.schedules.scheduleFire(p);

  async close(): Promise<void> {
    await this.notifier.close();
    await this.db.close();
  }
}
