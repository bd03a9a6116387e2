/**
 * The queue engine: every queue and message operation, protocol-neutral. SQS actions and the
 * jobs API both call this. It decides (visibility, delays, retention, tokens); the store writes.
 */
import type { Clock } from "./clock.js";
import { attributesMd5, md5Hex } from "./digests.js";
import { SluiceError, checkInteger, fail } from "./errors.js";
import { checkReceiveRequestAttemptId, formatSequenceNumber, groupFieldsFor, sendDedupFor } from "./fifo.js";
import type { IdSource } from "./ids.js";
import { limits } from "./limits.js";
import type { MessageAttributes, NewMessage, StoredMessage } from "./message.js";
import { messageSizeBytes, validateAttributes, validateBody } from "./message-validation.js";
import { AccountMoveTasks, MoveTasks } from "./move-tasks.js";
import type { QueueObserver } from "./observer.js";
import { QueueActivity, observingActivity } from "./queue-activity.js";
import { type Notifier, type StoreNotice, publishJobChanges } from "./notifier.js";
import { type QueueConfig, type QueueRecord, defaultQueueConfig, validateQueueConfig, validateQueueName } from "./queue.js";
import { QueueRecords } from "./queue-records.js";
import { ReceiptCodec, invalidReceipt, newReceiptSecret } from "./receipt.js";
import { checkRedrivePolicy, deadLetterTargetFor } from "./redrive.js";
import type { DeleteResult, MessageDeleteCall, MessageReceiveParams, MessageSendCall, QueueStats, ReceiveResult, SendOutcome, Store } from "./store.js";
import { oneAtATime, receiveShares } from "./turn-batch.js";
import { firstWithDedupId, withDuplicatesInSend } from "./message-rules.js";
import { QueueWaiters } from "./waiters.js";
import { type AccountQuotas, type QuotaSource, checkQueueCount, checkStored, storedQuotaOf } from "./quotas.js";

export interface SendInput {
  body: string;
  attributes?: MessageAttributes;
  systemAttributes?: MessageAttributes;
  delaySeconds?: number;
  /** 0–9, higher first; defaults to the queue's defaultPriority. */
  priority?: number;
  groupId?: string;
  deduplicationId?: string;
  /**
   * The caller knows the body is ASCII from U+0020 up, without quotes or backslashes (it came in
   * an ASCII JSON request without escapes): its characters are not checked again, and the message
   * carries it (NewMessage.bodyPlain).
   */
  bodyPlain?: boolean;
}

export interface SendResult {
  messageId: string;
  bodyMd5: string;
  attributesMd5?: string;
  systemAttributesMd5?: string;
  seq: number;
  /** FIFO queues: SQS's SequenceNumber (a duplicate gets the original's). */
  sequenceNumber?: string;
}

export type EntryOutcome<T> = { ok: true; value: T } | { ok: false; error: SluiceError };

export interface ReceiveInput {
  maxMessages?: number;
  visibilityTimeoutSeconds?: number;
  /** Undefined means the queue's ReceiveMessageWaitTimeSeconds. */
  waitTimeSeconds?: number;
  /**
   * Aborts a long poll (client gone, server shutting down). A function is called only once the
   * receive is about to wait: most receives under load find messages at once, and creating the
   * signal and its listeners for each of them is not free.
   */
  signal?: AbortSignal | (() => AbortSignal);
  /** FIFO: a retry with the same id within 5 min returns the same messages and receipts. */
  receiveRequestAttemptId?: string;
}

export interface ReceivedMessage extends StoredMessage {
  receiptHandle: string;
}

/** Where a peeked message is: as GET /v1/queues/{queue} counts them (visible, inFlight, delayed). */
export type MessageState = "visible" | "inFlight" | "delayed";

export interface PeekedMessage extends StoredMessage {
  state: MessageState;
}

export interface VisibilityChange {
  receiptHandle: string;
  visibilityTimeoutSeconds: number;
}

export interface QueueServiceDeps {
  store: Store;
  clock: Clock;
  ids: IdSource;
  /** Reported as SenderId. */
  senderId: string;
  /** Unexpected background errors (message move tasks); the server passes its logger. */
  onError?: (err: unknown) => void;
  /**
   * The key that signs receipt handles (receipt.ts). The server passes the one its store keeps, so
   * handles outlive restarts; without one the service makes its own, valid for its lifetime only.
   */
  receiptSecret?: Uint8Array;
  /** Told of message traffic and move tasks (the server's logs and metrics). */
  observer?: QueueObserver;
  /** Each account's quotas (queues, messages and bytes a queue holds); none when absent. */
  quotas?: QuotaSource;
}

/** Stands in for an accepted entry's outcome until the store has written it. */
/** Messages one retention write deletes at most: a few milliseconds of the store's time. */
export const expireSliceMessages = 1_000;

/** How upkeep cuts a retention pass (QueueService.expireMessages). */
export interface ExpireSlices {
  messages?: number;
  /** Between two full slices; false stops the pass. */
  between?: () => Promise<boolean>;
}

function bodyBytes(messages: readonly NewMessage[]): number {
  let bytes = 0;
  for (const m of messages) bytes += Buffer.byteLength(m.body, "utf8");
  return bytes;
}

const placeholder: EntryOutcome<never> = { ok: false, error: new SluiceError("InternalError", "entry not written") };

export class QueueService {
  readonly waiters: QueueWaiters;
  /** Message move tasks (DLQ redrive); the server starts and stops `moveTasks.runner`. */
  readonly moveTasks: MoveTasks;
  /** Sent and completed messages per queue, for throughput (queue-activity.ts). */
  readonly activity: QueueActivity;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly senderId: string;
  private readonly receipts: ReceiptCodec;
  private readonly observer: QueueObserver;
  readonly quotas: QuotaSource | undefined;
  /** The store's: what this service writes is told through it, and what any node wrote is heard from it. */
  private readonly notifier: Notifier;
  /** The one cache of queue records, dropped by queueChanged notices from any node (queue-records.ts). */
  private readonly records: QueueRecords;
  private readonly unsubscribe: () => void;
  /**
   * Each send, receive and delete goes through the store's `*Many` call; those a store can write
   * as one statement (`together`: plain sends and receives, a standard queue's deletes) with the
   * rest of their turn if the store asks (turn-batch.ts).
   */
  private readonly send: (call: MessageSendCall, together: boolean) => Promise<SendOutcome>;
  private readonly receive: (call: MessageReceiveParams, together: boolean) => Promise<ReceiveResult>;
  private readonly delete: (call: MessageDeleteCall, together: boolean) => Promise<DeleteResult>;

  constructor(deps: QueueServiceDeps) {
    this.store = deps.store;
    const store = deps.store;
    this.send = oneAtATime(store.gathersTurns, (sends) => store.messageSendMany({ sends }));
    this.receive = oneAtATime(store.gathersTurns, (receives) => store.messageReceiveMany({ receives }));
    this.delete = oneAtATime(store.gathersTurns, (deletes) => store.messageDeleteMany({ deletes }));
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.senderId = deps.senderId;
    this.quotas = deps.quotas;
    this.receipts = new ReceiptCodec(deps.receiptSecret ?? newReceiptSecret());
    this.activity = new QueueActivity(deps.clock);
    this.observer = observingActivity(deps.observer ?? {}, this.activity);
    this.waiters = new QueueWaiters(deps.clock);
    this.notifier = deps.store.notifier;
    this.records = new QueueRecords(this.notifier);
    this.moveTasks = new MoveTasks({ store: deps.store, clock: deps.clock, ids: deps.ids, directoryOf: (account) => this.forAccount(account), onError: deps.onError, observer: this.observer });
    this.unsubscribe = this.notifier.subscribe(this.onNotice);
  }

  /** Long polls on this node wake for messages written through any node (Store.notifier). */
  private readonly onNotice = (notice: StoreNotice): void => {
    if (notice.kind === "messagesVisible") {
      if (notice.visibleAtMs <= this.clock.nowMs()) {
        this.waiters.notify(notice.queueId, notice.everyone === true ? undefined : notice.count);
        return;
      }
      // Pollers mid-receive look again (their timers must allow for it); sleepers wake when it is due.
      this.waiters.notify(notice.queueId, 0);
      this.waiters.notifyAt(notice.queueId, notice.visibleAtMs, notice.everyone === true ? Number.POSITIVE_INFINITY : notice.count);
    } else if (notice.kind === "queueChanged") {
      // First, so that whatever the notice wakes reads the queue anew.
      this.records.drop(notice.queueId);
      // A resumed queue's long polls (and leases) look again; for other changes that is one spare receive.
      if (!notice.deleted) this.waiters.notify(notice.queueId);
      // Long polls on a deleted queue (receives, job leases) answer now, with nothing, not at their limit.
      if (notice.deleted) {
        this.waiters.queueGone(notice.queueId, (Math.max(limits.waitTimeMaxSeconds, limits.jobs.leaseWaitMaxSeconds) + 60) * 1000);
        this.activity.forget(notice.queueId);
      }
      // A shorter visibility or delay can make messages visible sooner than a waiter expects.
      else this.waiters.notify(notice.queueId);
    }
  };

  /** Stops hearing notices (shutdown, after closeAll). */
  close(): void {
    this.unsubscribe();
  }

  /** Each account's handle, made once (forAccount runs on every request). */
  private readonly handles = new Map<string, AccountQueues>();

  /**
   * The queues of one account ("" is the server's own: QueueRecord.account), over this service's
   * store, waiters, move tasks and notices. What a request signed with that account's credentials
   * works through. Every method here that takes a queue name takes its account first.
   */
  forAccount(account: string): AccountQueues {
    let handle = this.handles.get(account);
    if (!handle) this.handles.set(account, (handle = new AccountQueues(this, account)));
    return handle;
  }

  // ---- queues ----

  /**
   * Creates a queue. The same name with the same attributes returns the existing queue;
   * different attributes fail with QueueAlreadyExists, as SQS does.
   */
  async createQueue(account: string, p: { name: string; config?: Partial<QueueConfig>; tags?: Record<string, string> }): Promise<{ queue: QueueRecord; created: boolean }> {
    const fifo = p.config?.fifoQueue ?? false;
    validateQueueName(p.name, fifo);
    const config: QueueConfig = { ...defaultQueueConfig(fifo), ...p.config };
    validateQueueConfig(config);
    if (p.tags) checkTagCount(p.name, p.tags);
    await checkRedrivePolicy(p.name, config, this.lookupIn(account));
    const nowMs = this.clock.nowMs();
    const deletedAt = await this.store.queueDeletedAt({ account, name: p.name });
    if (deletedAt !== undefined && nowMs - deletedAt < limits.queueRecreateCooldownMs) {
      fail("QueueDeletedRecently", "You must wait 60 seconds after deleting a queue before you can create another with the same name.");
    }
    await this.checkQueueQuota(account, p.name);
    const result = await this.store.queueCreate({ account, name: p.name, config, tags: p.tags ?? {}, nowMs });
    if (!result.created && p.config && !sameRequestedConfig(result.queue.config, p.config)) {
      fail("QueueAlreadyExists", `A queue already exists with the same name and a different value for attribute(s) ${differingConfigKeys(result.queue.config, p.config).join(", ")}`);
    }
    return result;
  }

  /** With a queue quota: a queue that does not exist yet must fit (one that does is answered as it is). */
  private async checkQueueQuota(account: string, name: string): Promise<void> {
    const maxQueues = this.quotas?.of(account)?.maxQueues;
    if (maxQueues === undefined || (await this.findQueue(account, name)) !== undefined) return;
    checkQueueCount(this.quotas!, account, maxQueues, await this.store.queueCount({ account }));
  }

  /**
   * Refuses (OverLimit) what would take the queue past its account's stored-size quota (found by
   * storedQuotaOf, which callers ask first so sends to queues without one pay no await).
   */
  async checkStoredQuota(queue: QueueRecord, quotas: AccountQuotas, adding: { messages: number; bytes: number }): Promise<void> {
    checkStored(this.quotas!, quotas, queue, await this.store.queueHeld({ queueId: queue.id }), adding);
  }

  /** Finds queues by name in one account (a queue's dead-letter queue is in its own account). */
  private lookupIn(account: string): (name: string) => Promise<QueueRecord | undefined> {
    return (name) => this.findQueue(account, name);
  }

  /** Every account that has a queue ("" is the server's own): server upkeep visits each. */
  listAccounts(): Promise<string[]> {
    return this.store.queueAccounts();
  }

  /** The queue of this name in the account, if there is one. */
  async findQueue(account: string, name: string): Promise<QueueRecord | undefined> {
    return this.records.hit(account, name) ?? this.readQueue(account, name);
  }

  async getQueue(account: string, name: string): Promise<QueueRecord> {
    const queue = this.records.hit(account, name) ?? (await this.readQueue(account, name));
    if (!queue) fail("QueueNotFound", "The specified queue does not exist.");
    return queue;
  }

  /** The cached record, without waiting for a read (undefined: not kept; findQueue reads it). */
  keptQueue(account: string, name: string): QueueRecord | undefined {
    return this.records.hit(account, name);
  }

  /** A write found the queue gone before its deletion's notice came: its record goes now. */
  forgetQueue(queueId: number): void {
    this.records.drop(queueId);
  }

  private readQueue(account: string, name: string): Promise<QueueRecord | undefined> {
    return this.records.read(account, name, () => this.store.queueGet({ account, name }));
  }

  async listQueues(account: string, p: { prefix?: string; maxResults?: number; afterName?: string }): Promise<{ queues: QueueRecord[]; hasMore: boolean }> {
    const limit = p.maxResults ?? limits.listQueuesMaxResults;
    checkInteger("maxResults", limit, 1, limits.listQueuesMaxResults, "listQueuesLimit");
    const rows = await this.store.queueList({ account, prefix: p.prefix, afterName: p.afterName, limit: limit + 1 });
    return { queues: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  async deleteQueue(account: string, name: string): Promise<void> {
    const queue = await this.getQueue(account, name);
    const { liveJobIds } = await this.store.queueDelete({ id: queue.id, nowMs: this.clock.nowMs() });
    // The store deleted the queue's jobs with it: whoever waits on one of them hears of it here.
    this.notifier.publish({ kind: "queueChanged", queueId: queue.id, queueName: queue.name, deleted: { liveJobIds } });
  }

  async updateQueueConfig(account: string, name: string, patch: Partial<QueueConfig>): Promise<QueueRecord> {
    const queue = await this.getQueue(account, name);
    if (patch.fifoQueue !== undefined && patch.fifoQueue !== queue.config.fifoQueue) {
      fail("InvalidAttributeName", "A queue's type (FIFO or standard) is set when it is created and can't change.", { kind: "queueTypeChange" });
    }
    const config = { ...queue.config, ...patch };
    validateQueueConfig(config);
    if (patch.redrivePolicy) await checkRedrivePolicy(name, config, this.lookupIn(queue.account));
    await this.store.queueUpdate({ id: queue.id, config, nowMs: this.clock.nowMs() });
    this.queueChanged(queue);
    return { ...queue, config };
  }

  /**
   * Pauses or resumes a queue on every node: while paused, receives and job leases return
   * nothing (long polls wait, and are answered once it resumes); sends and submits go on.
   */
  async setPaused(account: string, name: string, paused: boolean): Promise<QueueRecord> {
    return this.updateQueueConfig(account, name, { paused });
  }

  /** Whether the queue is paused now (its record as last written, through the cache). */
  async isPaused(queue: QueueRecord): Promise<boolean> {
    return (await this.findQueue(queue.account, queue.name))?.config.paused === true;
  }

  /** Adds tags (keys and values checked by the protocol); a queue holds at most 50, as in SQS. */
  async tagQueue(account: string, name: string, tags: Record<string, string>): Promise<void> {
    const queue = await this.getQueue(account, name);
    const merged = { ...queue.tags, ...tags };
    checkTagCount(name, merged);
    await this.store.queueUpdate({ id: queue.id, tags: merged, nowMs: this.clock.nowMs() });
    this.queueChanged(queue);
  }

  async untagQueue(account: string, name: string, keys: string[]): Promise<void> {
    const queue = await this.getQueue(account, name);
    const tags = { ...queue.tags };
    for (const k of keys) delete tags[k];
    await this.store.queueUpdate({ id: queue.id, tags, nowMs: this.clock.nowMs() });
    this.queueChanged(queue);
  }

  /** Every node drops what it cached of the queue (Store.notifier). */
  private queueChanged(queue: QueueRecord): void {
    this.notifier.publish({ kind: "queueChanged", queueId: queue.id, queueName: queue.name });
  }

  async queueStats(queue: QueueRecord): Promise<QueueStats> {
    const nowMs = this.clock.nowMs();
    return this.store.queueStats({ queueId: queue.id, nowMs, minSentAtMs: this.minSentAtMs(queue, nowMs) });
  }

  /** queueStats at a price metrics can pay on every scrape (Store.queueDepth says what it trades). */
  async queueDepth(queue: QueueRecord): Promise<QueueStats> {
    const nowMs = this.clock.nowMs();
    return this.store.queueDepth({ queueId: queue.id, nowMs, minSentAtMs: this.minSentAtMs(queue, nowMs) });
  }

  /** Deletes every message of the queue (at most once a minute); returns how many. */
  async purgeQueue(account: string, name: string): Promise<number> {
    const queue = await this.getQueue(account, name);
    const nowMs = this.clock.nowMs();
    // Checked in the purge's own write: purges arriving together would all pass a check made here.
    const purged = await this.store.messagePurge({ queueId: queue.id, nowMs, refuseIfPurgedAfterMs: nowMs - limits.purgeCooldownMs });
    if (purged === undefined) {
      fail("PurgeQueueInProgress", `Queue ${name} was purged less than ${limits.purgeCooldownMs / 1000} seconds ago: a queue takes one purge a minute.`, { kind: "purgeCooldown", queueName: name });
    }
    publishJobChanges(this.notifier, purged.jobChanges, nowMs);
    // The purge wrote the queue's purge time: every node's record of it is out of date.
    this.queueChanged(queue);
    return purged.deleted;
  }

  /**
   * Deletes messages past their queue's retention period, oldest first, in store writes of at
   * most `slice.messages` each; `slice.between` runs after every full slice (upkeep yields the
   * event loop there, and stops by returning false). Returns how many.
   */
  async expireMessages(queue: QueueRecord, slice: ExpireSlices = {}): Promise<number> {
    const limit = slice.messages ?? expireSliceMessages;
    let total = 0;
    for (;;) {
      const nowMs = this.clock.nowMs();
      const expired = await this.store.messageExpire({ queueId: queue.id, minSentAtMs: this.minSentAtMs(queue, nowMs), nowMs, limit });
      // The store ended the live jobs among them in the same write: their waiters hear of it.
      publishJobChanges(this.notifier, expired.jobChanges, nowMs);
      total += expired.deleted;
      if (expired.deleted < limit) return total;
      if (slice.between && !(await slice.between())) return total;
    }
  }

  // ---- messages ----

  /**
   * Validates each entry on its own (a bad entry fails alone, as batch actions report) and
   * enqueues the valid ones in one atomic store write.
   */
  async sendMessages(queue: QueueRecord, entries: SendInput[]): Promise<Array<EntryOutcome<SendResult>>> {
    const nowMs = this.clock.nowMs();
    const outcomes: Array<EntryOutcome<SendResult>> = [];
    const accepted: NewMessage[] = [];
    const acceptedIndex: number[] = [];
    for (const [i, entry] of entries.entries()) {
      try {
        accepted.push(this.prepareMessage(queue, entry, nowMs));
        acceptedIndex.push(i);
        outcomes.push(placeholder); // replaced once the store assigned a seq
      } catch (err) {
        if (!(err instanceof SluiceError)) throw err;
        outcomes.push({ ok: false, error: err });
      }
    }
    if (accepted.length > 0) {
      const quotas = storedQuotaOf(this.quotas, queue);
      if (quotas !== undefined) await this.checkStoredQuota(queue, quotas, { messages: accepted.length, bytes: bodyBytes(accepted) });
      const dedup = sendDedupFor(queue.config, nowMs);
      // The store sees each deduplication id once per send: a repeat within it is answered here.
      const firsts = dedup ? firstWithDedupId(accepted, dedup) : undefined;
      const messages = firsts ? accepted.filter((_, k) => firsts[k] === k) : accepted;
      const sent = await this.send({ queueId: queue.id, messages, dedup }, !dedup && !messages.some((m) => m.groupId !== undefined));
      if (sent === "queueGone") {
        // Deleted on another node, its notice not here yet: the record goes now.
        this.forgetQueue(queue.id);
        fail("QueueNotFound", "The specified queue does not exist.");
      }
      const stored = firsts ? withDuplicatesInSend(firsts, sent) : sent;
      stored.forEach((m, k) => {
        // Digests are the new request's, also for a FIFO duplicate (as SQS answers).
        const sent = accepted[k]!;
        outcomes[acceptedIndex[k]!] = {
          ok: true,
          value: {
            messageId: m.messageId,
            bodyMd5: sent.bodyMd5,
            attributesMd5: sent.attributesMd5,
            systemAttributesMd5: sent.systemAttributesMd5,
            seq: m.seq,
            sequenceNumber: dedup ? formatSequenceNumber(m.seq) : undefined,
          },
        };
      });
      // A FIFO duplicate is acknowledged (with the original's id) but not enqueued again.
      const enqueued = accepted.filter((_, k) => !stored[k]!.duplicate);
      this.wakePollers(queue.id, enqueued);
      if (enqueued.length > 0) this.observer.messagesSent?.(queue, enqueued.length);
    }
    return outcomes;
  }

  async sendMessage(queue: QueueRecord, entry: SendInput): Promise<SendResult> {
    const [outcome] = await this.sendMessages(queue, [entry]);
    if (!outcome!.ok) throw outcome!.error;
    return outcome!.value;
  }

  private prepareMessage(queue: QueueRecord, input: SendInput, nowMs: number): NewMessage {
    const bodyPlain = input.bodyPlain === true;
    validateBody(input.body, bodyPlain);
    const attributes = input.attributes ?? {};
    const systemAttributes = input.systemAttributes ?? {};
    validateAttributes(attributes);
    const size = messageSizeBytes(input.body, attributes);
    const maxBytes = queue.config.maximumMessageSizeBytes;
    if (size > maxBytes) fail("MessageTooLong", `The message is ${size} bytes with its attributes; queue ${queue.name} takes at most ${maxBytes}.`, { kind: "messageTooLong", maxBytes });
    // FIFO queues take delays only at the queue level (groupFieldsFor rejects a per-message one).
    const delaySeconds = (queue.config.fifoQueue ? undefined : input.delaySeconds) ?? queue.config.delaySeconds;
    checkInteger("delaySeconds", delaySeconds, 0, limits.delayMaxSeconds, "messageDelaySeconds");
    const priority = input.priority ?? queue.config.defaultPriority;
    checkInteger("priority", priority, limits.priorityMin, limits.priorityMax, "messagePriority");
    const group = groupFieldsFor(queue.config, input);
    return {
      messageId: this.ids.messageId(),
      body: input.body,
      attributes,
      systemAttributes,
      bodyMd5: md5Hex(input.body),
      attributesMd5: attributesMd5(attributes),
      systemAttributesMd5: attributesMd5(systemAttributes),
      sentAtMs: nowMs,
      visibleAtMs: nowMs + delaySeconds * 1000,
      priority,
      groupId: group.groupId,
      deduplicationId: group.deduplicationId,
      senderId: this.senderId,
      bodyPlain,
    };
  }

  /**
   * Up to `limit` of the queue's messages as they are, changing nothing (no visibility, receive
   * count or receipt change): visible ones first, then in flight or delayed (Store.messagePeek).
   */
  async peekMessages(account: string, name: string, limit: number = limits.admin.peekDefaultMessages): Promise<PeekedMessage[]> {
    checkInteger("limit", limit, 1, limits.admin.peekMaxMessages);
    const queue = await this.getQueue(account, name);
    const nowMs = this.clock.nowMs();
    const messages = await this.store.messagePeek({ queueId: queue.id, minSentAtMs: this.minSentAtMs(queue, nowMs), limit });
    // As queueStats counts them: hidden and received before is in flight, hidden and never received is delayed.
    return messages.map((m) => Object.assign(m, { state: m.visibleAtMs <= nowMs ? "visible" : m.receiveCount > 0 ? "inFlight" : ("delayed" as MessageState) }));
  }

  /**
   * Receives up to maxMessages. With a wait time, holds until a message is available (woken by
   * the send, or by a timer set to the next visibility/delay expiry) or the wait passes.
   */
  async receiveMessages(queue: QueueRecord, input: ReceiveInput): Promise<ReceivedMessage[]> {
    const max = input.maxMessages ?? 1;
    checkInteger("maxMessages", max, 1, limits.receiveMaxMessages, "receiveMaxMessages");
    const visibilitySeconds = input.visibilityTimeoutSeconds ?? queue.config.visibilityTimeoutSeconds;
    checkInteger("visibilitySeconds", visibilitySeconds, 0, limits.visibilityTimeoutMaxSeconds, "visibilitySeconds");
    const waitSeconds = input.waitTimeSeconds ?? queue.config.receiveMessageWaitTimeSeconds;
    checkInteger("waitSeconds", waitSeconds, 0, limits.waitTimeMaxSeconds, "receiveWaitSeconds");
    const fifo = queue.config.fifoQueue;
    const attemptId = fifo ? input.receiveRequestAttemptId : undefined;
    if (attemptId !== undefined) checkReceiveRequestAttemptId(attemptId);
    const deadLetter = await deadLetterTargetFor(queue, this.lookupIn(queue.account));
    const deadlineMs = this.clock.nowMs() + waitSeconds * 1000;
    let signal: AbortSignal | undefined;
    let paused = queue.config.paused === true;
    for (let round = 0; ; round++) {
      const version = this.waiters.version(queue.id);
      // Every round after the first follows a wait, across which the queue may have been paused or resumed.
      if (round > 0) paused = await this.isPaused(queue);
      const nowMs = this.clock.nowMs();
      if (paused) {
        // Nothing is received while paused: wait out the long poll, looking again at each wake-up.
        const remainingMs = deadlineMs - nowMs;
        signal ??= typeof input.signal === "function" ? input.signal() : input.signal;
        if (remainingMs <= 0 || signal?.aborted || this.waiters.isClosed || this.waiters.isGone(queue.id)) return [];
        await this.waiters.wait(queue.id, version, remainingMs, max, signal);
        if (signal?.aborted) return [];
        continue;
      }
      const { messages, deadLetteredCount, nextVisible } = await this.receive({
        queueId: queue.id,
        max,
        nowMs,
        visibleUntilMs: nowMs + visibilitySeconds * 1000,
        minSentAtMs: this.minSentAtMs(queue, nowMs),
        receiptToken: this.ids.receiptToken(),
        fifo,
        deadLetter,
        attempt: attemptId === undefined ? undefined : { attemptId, expiresAtMs: nowMs + limits.receiveAttemptWindowMs },
        waitUntilMs: deadlineMs > nowMs ? deadlineMs : undefined,
      }, receiveShares({ fifo, deadLetter }));
      if (deadLetteredCount > 0) {
        this.announceVisible(deadLetter!.queueId, deadLetteredCount, nowMs);
        this.observer.messagesDeadLettered?.(queue, deadLetteredCount);
      }
      if (messages.length > 0) {
        this.observer.messagesReceived?.(queue, messages.length);
        // A full receive suggests more are waiting: pass the wake-up on to the next poller.
        if (messages.length === max) this.waiters.notify(queue.id, 1);
        // The store's objects are ours (Store.messageReceiveMany): one property added, not a 20-field copy each.
        const handles = this.receipts.encodeAll(queue.id, messages.map((m) => ({ seq: m.seq, token: m.receiptToken! })));
        return messages.map((m, i) => Object.assign(m, { receiptHandle: handles[i]! }));
      }
      const remainingMs = deadlineMs - this.clock.nowMs();
      signal ??= typeof input.signal === "function" ? input.signal() : input.signal;
      if (remainingMs <= 0 || signal?.aborted || this.waiters.isClosed || this.waiters.isGone(queue.id)) return [];
      const nextVisibleAt = nextVisible !== undefined ? nextVisible.atMs : await this.store.messageNextVisibleAt({ queueId: queue.id, nowMs });
      const untilNextMs = nextVisibleAt === undefined ? remainingMs : Math.max(1, nextVisibleAt - this.clock.nowMs());
      await this.waiters.wait(queue.id, version, Math.min(remainingMs, untilNextMs), max, signal);
      // Woken by a send while its client was leaving: receiving now would hide messages from
      // everyone for a visibility timeout, answered to nobody.
      if (signal?.aborted) return [];
    }
  }

  /**
   * Deletes by receipt handle. On a standard queue any handle of the message deletes it — one from
   * an earlier receive too — and deleting it again with any of them succeeds, as SQS does. On a
   * FIFO queue a handle whose lease has ended (the visibility timeout ran out, or the message was
   * received again since) is refused: SQS answers "The receipt handle has expired".
   */
  async deleteMessages(queue: QueueRecord, receiptHandles: string[]): Promise<Array<EntryOutcome<null>>> {
    const outcomes: Array<EntryOutcome<null>> = [];
    const refs: Array<{ seq: number; token: string }> = [];
    const index: number[] = [];
    const receipts = this.receipts.decodeAll(receiptHandles);
    for (const [i, handle] of receiptHandles.entries()) {
      try {
        const r = receipts[i];
        if (r === undefined || r.queueId !== queue.id) invalidReceipt(handle);
        refs.push({ seq: r.seq, token: r.token });
        index.push(i);
        outcomes.push({ ok: true, value: null });
      } catch (err) {
        if (!(err instanceof SluiceError)) throw err;
        outcomes.push({ ok: false, error: err });
      }
    }
    if (refs.length > 0) {
      const fifo = queue.config.fifoQueue;
      const { deleted, groupsReady, expired } = await this.delete({
        queueId: queue.id,
        receipts: refs,
        ...(fifo ? { nowMs: this.clock.nowMs(), refuseExpired: true } : { anyReceipt: true }),
      }, !fifo);
      expired?.forEach((isExpired, k) => {
        if (!isExpired) return;
        const handle = receiptHandles[index[k]!]!;
        outcomes[index[k]!] = {
          ok: false,
          error: new SluiceError("InvalidParameterValue", "The receipt handle has expired: its visibility timeout ran out, or the message was received again since.", {
            kind: "receiptHandleExpired",
            handle,
          }),
        };
      });
      // A FIFO delete can unblock the rest of its message group: wake long polls to look again —
      // but only when it did. Every notify moves the queue's version, which sends each poller
      // whose receive just came back empty straight into another receive: notifying on every
      // delete made idle FIFO consumers spin through receives, and latency grew with their number.
      if (groupsReady > 0) this.announceVisible(queue.id, groupsReady, this.clock.nowMs());
      if (this.observer.messagesDeleted) {
        let count = 0;
        for (const d of deleted) if (d) count++;
        if (count > 0) this.observer.messagesDeleted(queue, count);
      }
    }
    return outcomes;
  }

  /**
   * Changes the visibility of received messages by receipt handle. While the message is in flight,
   * on a standard queue any of its handles changes it — one from an earlier receive too, as SQS
   * does; on a FIFO queue only the latest receive's (an earlier one is InvalidParameterValue).
   * Once the message is visible again (its lease ran out, or a VisibilityTimeout of 0 ended it)
   * a handle succeeds and changes nothing, as SQS answers (docs/sqs-compatibility.md, "Receipt
   * handles after a lease ends").
   */
  async changeVisibility(queue: QueueRecord, changes: VisibilityChange[]): Promise<Array<EntryOutcome<null>>> {
    const nowMs = this.clock.nowMs();
    const outcomes: Array<EntryOutcome<null>> = [];
    const entries: Array<{ seq: number; token: string; visibleAtMs: number }> = [];
    const index: number[] = [];
    const receipts = this.receipts.decodeAll(changes.map((c) => c.receiptHandle));
    for (const [i, change] of changes.entries()) {
      try {
        const r = receipts[i];
        if (r === undefined || r.queueId !== queue.id) invalidReceipt(change.receiptHandle);
        checkInteger("visibilitySeconds", change.visibilityTimeoutSeconds, 0, limits.visibilityTimeoutMaxSeconds, "visibilitySeconds");
        entries.push({ seq: r.seq, token: r.token, visibleAtMs: nowMs + change.visibilityTimeoutSeconds * 1000 });
        index.push(i);
        outcomes.push({ ok: true, value: null });
      } catch (err) {
        if (!(err instanceof SluiceError)) throw err;
        outcomes.push({ ok: false, error: err });
      }
    }
    if (entries.length === 0) return outcomes;
    // SQS keeps a message in flight at most 12 hours from its receive, extensions included.
    const maxLeaseMs = limits.visibilityTimeoutMaxSeconds * 1000;
    const results = await this.store.messageChangeVisibility({ queueId: queue.id, nowMs, maxLeaseMs, anyReceipt: !queue.config.fifoQueue, entries });
    const changed: Array<{ visibleAtMs: number }> = [];
    results.forEach((result, k) => {
      const handle = changes[index[k]!]!.receiptHandle;
      if (result === "beyondLimit") {
        const seconds = changes[index[k]!]!.visibilityTimeoutSeconds;
        outcomes[index[k]!] = {
          ok: false,
          error: new SluiceError(
            "InvalidParameterValue",
            `A message stays in flight at most ${limits.visibilityTimeoutMaxSeconds} seconds from its receive: ${seconds} more seconds would go beyond.`,
            { kind: "visibilityBeyondLimit", value: seconds },
          ),
        };
      } else if (result === "notFound") {
        outcomes[index[k]!] = {
          ok: false,
          error: new SluiceError("InvalidParameterValue", "The receipt handle's message does not exist, or is not available for a visibility change.", {
            kind: "receiptHandleNotAvailable",
            handle,
          }),
        };
      } else if (result === "changed") {
        changed.push(entries[k]!);
      }
      // "notInFlight": the lease this handle names is over and the message is visible again. The
      // entry succeeds and nothing changes: the message is not hidden again, its handle not revived.
    });
    this.wakePollers(queue.id, changed);
    return outcomes;
  }

  /**
   * Wakes long polls, on every node, for messages that are visible now or become visible later (a
   * delay, a visibility change, a job's retry backoff): those wake sleeping polls when they are
   * due, and send pollers caught mid-receive back to look again (their wait must allow for them).
   * `everyone`: the messages are jobs only some workers may lease (requires), so a wake-up counted
   * per message could go to a worker that can't take them: every poller of the queue looks.
   */
  wakePollers(queueId: number, messages: ReadonlyArray<{ visibleAtMs: number }>, everyone = false): void {
    const nowMs = this.clock.nowMs();
    let readyNow = 0;
    const later = new Map<number, number>();
    for (const m of messages) {
      if (m.visibleAtMs <= nowMs) readyNow++;
      else later.set(m.visibleAtMs, (later.get(m.visibleAtMs) ?? 0) + 1);
    }
    if (readyNow > 0) this.announceVisible(queueId, readyNow, nowMs, everyone);
    for (const [atMs, count] of later) this.announceVisible(queueId, count, atMs, everyone);
  }

  /** `count` messages of the queue are visible from `visibleAtMs` on (Store.notifier); `everyone` as wakePollers'. */
  announceVisible(queueId: number, count: number, visibleAtMs: number, everyone = false): void {
    this.notifier.publish(everyone ? { kind: "messagesVisible", queueId, count, visibleAtMs, everyone } : { kind: "messagesVisible", queueId, count, visibleAtMs });
  }

  private minSentAtMs(queue: QueueRecord, nowMs: number): number {
    return nowMs - queue.config.messageRetentionPeriodSeconds * 1000;
  }
}

/**
 * One account's queues: names resolve there; queue records carry their account, so what takes a
 * record is the service's own. Holds nothing of its own but which account.
 */
export class AccountQueues {
  readonly moveTasks: AccountMoveTasks;

  constructor(
    readonly service: QueueService,
    readonly account: string,
  ) {
    this.moveTasks = new AccountMoveTasks(service.moveTasks, account);
  }

  createQueue(p: { name: string; config?: Partial<QueueConfig>; tags?: Record<string, string> }): Promise<{ queue: QueueRecord; created: boolean }> {
    return this.service.createQueue(this.account, p);
  }

  findQueue(name: string): Promise<QueueRecord | undefined> {
    return this.service.findQueue(this.account, name);
  }

  getQueue(name: string): Promise<QueueRecord> {
    return this.service.getQueue(this.account, name);
  }

  listQueues(p: { prefix?: string; maxResults?: number; afterName?: string }): Promise<{ queues: QueueRecord[]; hasMore: boolean }> {
    return this.service.listQueues(this.account, p);
  }

  deleteQueue(name: string): Promise<void> {
    return this.service.deleteQueue(this.account, name);
  }

  updateQueueConfig(name: string, patch: Partial<QueueConfig>): Promise<QueueRecord> {
    return this.service.updateQueueConfig(this.account, name, patch);
  }

  setPaused(name: string, paused: boolean): Promise<QueueRecord> {
    return this.service.setPaused(this.account, name, paused);
  }

  tagQueue(name: string, tags: Record<string, string>): Promise<void> {
    return this.service.tagQueue(this.account, name, tags);
  }

  untagQueue(name: string, keys: string[]): Promise<void> {
    return this.service.untagQueue(this.account, name, keys);
  }

  purgeQueue(name: string): Promise<number> {
    return this.service.purgeQueue(this.account, name);
  }

  peekMessages(name: string, limit?: number): Promise<PeekedMessage[]> {
    return this.service.peekMessages(this.account, name, limit);
  }

  // What takes a queue record is the service's: the record carries its account.

  sendMessages(queue: QueueRecord, entries: SendInput[]): Promise<Array<EntryOutcome<SendResult>>> {
    return this.service.sendMessages(queue, entries);
  }

  sendMessage(queue: QueueRecord, entry: SendInput): Promise<SendResult> {
    return this.service.sendMessage(queue, entry);
  }

  receiveMessages(queue: QueueRecord, input: ReceiveInput): Promise<ReceivedMessage[]> {
    return this.service.receiveMessages(queue, input);
  }

  deleteMessages(queue: QueueRecord, receiptHandles: string[]): Promise<Array<EntryOutcome<null>>> {
    return this.service.deleteMessages(queue, receiptHandles);
  }

  changeVisibility(queue: QueueRecord, changes: VisibilityChange[]): Promise<Array<EntryOutcome<null>>> {
    return this.service.changeVisibility(queue, changes);
  }

  queueStats(queue: QueueRecord): Promise<QueueStats> {
    return this.service.queueStats(queue);
  }

  queueDepth(queue: QueueRecord): Promise<QueueStats> {
    return this.service.queueDepth(queue);
  }
}

function checkTagCount(queueName: string, tags: Record<string, string>): void {
  const count = Object.keys(tags).length;
  if (count > limits.tagsPerQueueMax) {
    fail("InvalidParameterValue", `A queue has at most ${limits.tagsPerQueueMax} tags; ${queueName} would have ${count}.`, { kind: "tagCount", queueName });
  }
}

function sameRequestedConfig(existing: QueueConfig, requested: Partial<QueueConfig>): boolean {
  return differingConfigKeys(existing, requested).length === 0;
}

/** The fields a CreateQueue asked for that the existing queue has otherwise (QueueAlreadyExists). */
export function differingConfigKeys(existing: QueueConfig, requested: Partial<QueueConfig>): Array<keyof QueueConfig> {
  return (Object.keys(requested) as Array<keyof QueueConfig>).filter(
    (k) => requested[k] !== undefined && JSON.stringify(existing[k]) !== JSON.stringify(requested[k]),
  );
}

