/**
 * The one narrow interface every store implements (river style: noun-first names, one params
 * object per method, plain data in and out). Decisions live in core; a store only performs atomic
 * reads and writes, and carries core's notices between the handles on its database (notifier).
 * Time is always passed in (`nowMs`), never read by a store. Every store runs the same
 * conformance suite (src/stores/testkit); docs/writing-a-store.md says how to write one.
 */
import type { JobEventLog } from "./job-event-log.js";
import type { JobChange, JobStore } from "./job-store.js";
import type { ScheduleStore } from "./schedules/schedule-store.js";
import type { BatchStore } from "./batches/batch-store.js";
import type { BlobStore } from "./blobs/blob-store.js";
import type { NewMessage, StoredMessage } from "./message.js";
import type { MessageMoveParams, MessageMoveResult, MoveTaskRecord, MoveTaskStatus } from "./move-task-record.js";
import type { Notifier } from "./notifier.js";
import type { QueueConfig, QueueRecord } from "./queue.js";
import type { WorkerStore } from "./worker-store.js";

export interface QueueStats {
  /** Ready to be received now. */
  visible: number;
  /** Received and not yet deleted or returned. */
  inFlight: number;
  /** Sent with a delay that has not passed yet. */
  delayed: number;
  oldestVisibleSentAtMs?: number;
}

export interface ReceiptRef {
  seq: number;
  token: string;
}

/**
 * "notInFlight": the receipt's token is current but its lease is over (the message is visible
 * again); nothing changed. "beyondLimit": the new visibility would end more than `maxLeaseMs`
 * after the receive.
 */
export type VisibilityChangeResult = "changed" | "notFound" | "notInFlight" | "beyondLimit";

export interface DeleteResult {
  /** Per receipt, in order: whether it deleted its message. */
  deleted: boolean[];
  /**
   * With `nowMs`: the message groups of deleted messages whose oldest remaining message is
   * visible at `nowMs` — FIFO groups a receive may be able to take now (an over-count, never an
   * under-count: a group with a message still in flight counts too). 0 without `nowMs`.
   */
  groupsReady: number;
  /**
   * With `refuseExpired`, per receipt: its lease had ended — the message is still in the queue,
   * but visible at `nowMs` or received again since — so it deleted nothing.
   */
  expired?: boolean[];
}

/**
 * FIFO deduplication for a send: the store checks each message's deduplicationId (scoped to the
 * queue, or to its group) against ids recorded and not yet expired, and records new ones — in the
 * same write as the insert, so two concurrent duplicates can't both be enqueued. Core sends each
 * id (in its scope) at most once per send: it answers a repeat within a send itself.
 */
export interface SendDedup {
  scope: "queue" | "messageGroup";
  nowMs: number;
  /** When an id recorded by this send stops deduplicating (send time + 5 min). */
  expiresAtMs: number;
}

/** A sent message; a duplicate carries the original's messageId and seq and was not enqueued. */
export interface SentMessage {
  seq: number;
  messageId: string;
  duplicate?: boolean;
}

/** Where a receive moves messages that were received too often (RedrivePolicy). */
export interface DeadLetterTarget {
  queueId: number;
  /** A message already received this many times is moved instead of delivered. */
  maxReceiveCount: number;
  /** Remembered on the moved message (DeadLetterQueueSourceArn, redrive to source). */
  sourceQueueName: string;
}

/** FIFO ReceiveRequestAttemptId: a retry within the window returns the same messages and receipts. */
export interface ReceiveAttempt {
  attemptId: string;
  expiresAtMs: number;
}

export interface ReceiveResult {
  messages: StoredMessage[];
  /** Messages moved to the dead-letter target by this receive. */
  deadLetteredCount: number;
  /**
   * Optional, only when the receive was given `waitUntilMs` and received nothing: the earliest
   * time after `nowMs`, and not after `waitUntilMs`, at which one of the queue's messages becomes
   * visible (`atMs` undefined: none by then) — messageNextVisibleAt's answer, bounded, read in
   * the same round trip. When absent, core asks messageNextVisibleAt.
   */
  nextVisible?: { atMs: number | undefined };
}

/**
 * Messages a purge or retention deleted, and what happened to the live jobs among them: core
 * publishes the changes (SSE, held waits), as it does for every other transition.
 */
export interface MessagesDeleted {
  deleted: number;
  jobChanges: JobChange[];
}

/**
 * What a queue's deletion took with it that core must tell of: its jobs go with it (the store
 * deletes them in the same write), and whoever waits on one of them would otherwise wait in vain.
 */
export interface QueueDeleted {
  /**
   * Its live (waiting, queued or running) jobs, by id: the only ones a held request or an event stream can
   * be waiting on (either ends as soon as it sees its job finished).
   */
  liveJobIds: string[];
}

/** Queues, messages and move tasks here; jobs and the webhook outbox in job-store.ts. */
export interface MessageReceiveParams {
  queueId: number;
  max: number;
  nowMs: number;
  visibleUntilMs: number;
  minSentAtMs: number;
  receiptToken: string;
  fifo?: boolean;
  deadLetter?: DeadLetterTarget;
  attempt?: ReceiveAttempt;
  /** A long poll: if nothing is received, the caller waits until then (see ReceiveResult.nextVisible). */
  waitUntilMs?: number;
}

/** One send of messageSendMany. */
export interface MessageSendCall {
  queueId: number;
  messages: NewMessage[];
  dedup?: SendDedup;
}

/** A send's answer: its messages in order, or "queueGone" (deleted since the caller read it; nothing written). */
export type SendOutcome = SentMessage[] | "queueGone";

/** One delete of messageDeleteMany. */
export interface MessageDeleteCall {
  queueId: number;
  receipts: ReceiptRef[];
  nowMs?: number;
  refuseExpired?: boolean;
  anyReceipt?: boolean;
}

export interface Store extends JobStore, JobEventLog, ScheduleStore, WorkerStore, BatchStore, BlobStore {
  /**
   * Whether core should gather the calls of one event-loop turn that a store can write as one
   * statement — sends without `dedup` or groups, receives without `fifo` or `deadLetter`, deletes
   * with `anyReceipt` — into one `*Many` call (turn-batch.ts); any other call comes alone. True for
   * a store that pays per statement (PostgreSQL); false for one that groups its commits itself (SQLite).
   */
  readonly gathersTurns: boolean;

  /**
   * Carries core's notices (new visible messages, job changes, queue changes) to every handle on
   * this database, this one's included (notifier.ts). Core caches queue records and drops them on
   * a queueChanged notice, which it publishes after every queue write it makes; a store keeps none.
   */
  readonly notifier: Notifier;

  /**
   * Creates the queue, or returns the existing one unchanged (`created: false`). A queue name is
   * unique within its account (QueueRecord.account); every `account` below defaults to "", the
   * server's own account.
   */
  queueCreate(p: { account?: string; name: string; config: QueueConfig; tags: Record<string, string>; nowMs: number }): Promise<{ queue: QueueRecord; created: boolean }>;
  /** Read from the database on every call: core keeps the cache (queue-records.ts). */
  queueGet(p: { account?: string; name: string }): Promise<QueueRecord | undefined>;
  /** The account's queues in name order, after `afterName` when given. */
  queueList(p: { account?: string; prefix?: string; afterName?: string; limit: number }): Promise<QueueRecord[]>;
  /** Every account that has a queue, in order (server upkeep visits each account's queues). */
  queueAccounts(): Promise<string[]>;
  /** How many queues the account has (its queue quota's check; an account's queues are few). */
  queueCount(p: { account?: string }): Promise<number>;
  /**
   * Every message the queue holds (in flight, delayed and not yet expired ones too) and their
   * bodies' bytes (UTF-8), from the counts kept in the writes: a per-queue quota's check, never a scan.
   */
  queueHeld(p: { queueId: number }): Promise<{ messages: number; bytes: number }>;
  /** Config and tags; the purge time is set by the purge's own write (messagePurge). */
  queueUpdate(p: { id: number; config?: QueueConfig; tags?: Record<string, string>; nowMs: number }): Promise<void>;
  /**
   * Deletes the queue, its messages and its jobs, and remembers when (for QueueDeletedRecently).
   * Returns the live jobs it deleted (none if the queue was already gone).
   */
  queueDelete(p: { id: number; nowMs: number }): Promise<QueueDeleted>;
  /** When a queue of this name was last deleted from the account, if ever. */
  queueDeletedAt(p: { account?: string; name: string }): Promise<number | undefined>;
  /**
   * The queue's counts at a cost that does not grow with the visible backlog: a count kept per
   * queue in the writes that add or remove messages, less the in-flight, delayed and
   * past-retention messages, walked by index (usually few). Exact when nothing writes meanwhile.
   */
  queueStats(p: { queueId: number; nowMs: number; minSentAtMs: number }): Promise<QueueStats>;
  /**
   * What queueStats counts, for metrics that read every queue on every scrape. May be cheaper
   * and approximate: messages past retention that upkeep has not deleted yet may count as
   * visible, and `oldestVisibleSentAtMs` may be that of the message visible longest.
   */
  queueDepth(p: { queueId: number; nowMs: number; minSentAtMs: number }): Promise<QueueStats>;

  /**
   * Each send enqueues its messages atomically, with store-assigned `seq`s (with `dedup`, see
   * SendDedup), and is answered on its own: a queue deleted since the caller read its record is
   * refused inside the write ("queueGone", nothing of that send written), the others go on. A
   * store may write all the sends of one call with one statement.
   */
  messageSendMany(p: { sends: MessageSendCall[] }): Promise<SendOutcome[]>;
  /**
   * Each receive leases up to `max` visible messages (priority high→low, then oldest first),
   * atomically setting their visibility to `visibleUntilMs`, bumping receiveCount and setting
   * `receiptToken` (fresh for every receive; with the seq it makes each receipt unique). The
   * receives of one call are answered as if made one after the other, in order. Messages sent
   * before `minSentAtMs` are past retention and are never returned.
   * Messages with a groupId are served fairly across groups (least-served group first, see
   * docs/fair-queues.md). `fifo`: strict seq order within a group and no delivery from a group
   * that has a message in flight. `deadLetter`: messages already received maxReceiveCount times
   * move to the target queue (receive count reset, source remembered) instead of being delivered —
   * unless the target was deleted since the caller resolved it: then they are delivered, as with
   * no target (SQS keeps messages in the source queue when its dead-letter queue is gone).
   * The messages returned are new objects that belong to the caller (core adds to them).
   */
  messageReceiveMany(p: { receives: MessageReceiveParams[] }): Promise<ReceiveResult[]>;
  /**
   * Each delete removes by receipt; a receipt whose token no longer matches deletes nothing (false)
   * — unless `anyReceipt` (standard queues: SQS takes a message's older receipt handles too), where
   * a receipt deletes its message whichever receive it came from (the caller checked it is one the
   * server issued). With `nowMs` (FIFO queues) it also counts the groups a delete may have
   * unblocked. With `refuseExpired` (FIFO queues, needs `nowMs`) a receipt whose lease has ended
   * deletes nothing either, even with the current token, and is reported in `expired`. The
   * deletes of one call are answered as if made one after the other, in order.
   */
  messageDeleteMany(p: { deletes: MessageDeleteCall[] }): Promise<DeleteResult[]>;
  /**
   * Sets the visibility of in-flight messages by receipt ("notFound" when its token no longer
   * matches, unless `anyReceipt`, as for messageDeleteMany). With `maxLeaseMs`, refuses ("beyondLimit",
   * nothing changed) a visibleAtMs more than that after the message's latest receive.
   */
  messageChangeVisibility(p: { queueId: number; nowMs: number; maxLeaseMs?: number; anyReceipt?: boolean; entries: Array<ReceiptRef & { visibleAtMs: number }> }): Promise<VisibilityChangeResult[]>;
  /**
   * Up to `limit` messages of the queue, read without changing them (no visibility, receive count
   * or receipt change): visible ones first, in the order they became visible, then those in
   * flight or delayed, by when they become visible (seq breaks ties). Messages sent before
   * `minSentAtMs` are past retention and are left out. The dashboard's and CLI's peek.
   */
  messagePeek(p: { queueId: number; minSentAtMs: number; limit: number }): Promise<StoredMessage[]>;
  /** The earliest time after `nowMs` at which a message of this queue becomes visible. */
  messageNextVisibleAt(p: { queueId: number; nowMs: number }): Promise<number | undefined>;
  /**
   * Deletes every message of the queue; live jobs among them end canceled at `nowMs`
   * (messageLostTransition) and are returned as `jobChanges`. With `refuseIfPurgedAfterMs`:
   * deletes nothing and returns undefined if the queue was purged after that time, else also
   * records the purge at `nowMs` — check and purge in one write, so concurrent purges can't both pass.
   */
  messagePurge(p: { queueId: number; nowMs: number; refuseIfPurgedAfterMs?: number }): Promise<MessagesDeleted | undefined>;
  /**
   * Deletes messages past retention: the `limit` sent first (all when absent), read through an
   * index on send time, so a slice costs what it deletes whatever the backlog (upkeep calls it
   * slice by slice). Live jobs among them end failed at `nowMs`, returned as `jobChanges`.
   */
  messageExpire(p: { queueId: number; minSentAtMs: number; nowMs: number; limit?: number }): Promise<MessagesDeleted>;

  /**
   * Moves up to `max` visible messages of the source queue to `destinationQueueId` or, when absent,
   * each to the queue named by its deadLetterSourceQueueName in the source queue's account — as
   * new enqueues (visible now, sent now, receive count 0), keeping messageId, body and attributes. With `taskHandle`, moves only
   * while that task is RUNNING and adds the count to its movedCount in the same write. A
   * source queue deleted since the caller read it moves nothing (`sourceGone`), and so does a
   * `destinationQueueId` deleted since then (`destinationGone`).
   */
  messageMove(p: MessageMoveParams): Promise<MessageMoveResult>;

  /** Records a new task unless the source queue (in the task's account) already has an active one (`created: false`). */
  moveTaskCreate(p: { task: MoveTaskRecord }): Promise<{ created: boolean }>;
  /** The task; its `account` is set only when it isn't the server's own (""). */
  moveTaskGet(p: { taskHandle: string }): Promise<MoveTaskRecord | undefined>;
  /** Newest first; by source queue (in `account`, default ""), or every account's active tasks (RUNNING/CANCELLING). */
  moveTaskList(p: { account?: string; sourceQueueName?: string; activeOnly?: boolean; limit: number }): Promise<MoveTaskRecord[]>;
  /** Sets the status (and failure reason) if the task's status is one of `fromStatuses`. */
  moveTaskUpdate(p: { taskHandle: string; status: MoveTaskStatus; failureReason?: string; fromStatuses: readonly MoveTaskStatus[]; nowMs: number }): Promise<boolean>;

  /**
   * A named secret the server keeps with its data (the key that signs receipt handles): the stored
   * value, or `candidate`, stored now, when there is none. The first writer wins, so servers that
   * share a store and start together all get the same value; it outlives restarts.
   */
  secretGetOrCreate(p: { name: string; candidate: string }): Promise<string>;

  close(): Promise<void>;
}
