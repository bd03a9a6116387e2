/**
 * The immutable part of recently sent messages, kept in memory by seq so a receive can read
 * only the columns that change (visibility, receive count, receipt) and skip decoding the body.
 * It is kept as core reads it (camelCase, attributes as objects): a hit is not converted to a row
 * and back, and its attributes' JSON is not parsed again. The narrow SELECT costs about half of
 * the full-row one.
 *
 * It can never serve wrong content: a message's content never changes after its INSERT, and every
 * hit is checked against the message id the narrow SELECT read from the row (seqs of rolled-back
 * inserts are reused by SQLite; message ids are unique). Entries are dropped when their message
 * is deleted; bulk deletes (purge, retention, queue deletion) clear it all. It admits entries
 * only while under its byte budget, and clears itself when full, so a backlog larger than the
 * budget costs nothing more than a receive without the cache.
 *
 * A queue whose remembered messages wait unreceived past a share of the budget is filling a
 * backlog: its new messages are not remembered (a receive reaches them only after the ones
 * before). Otherwise a burst would push every body through the old generation, remembered and
 * cleared by the budget's worth, and the heap would grow by several budgets (no hit gained).
 */
import { attributesAsStored } from "../../core/attributes-json.js";
import type { MessageAttributes, NewMessage, StoredMessage } from "../../core/message.js";
import type { MessageRow } from "../codecs/message-row.js";

/**
 * What an INSERT sets once and no statement updates afterwards (every `UPDATE messages` sets only
 * columns of MessageState), as a received message carries it.
 */
export type MessageContent = Readonly<
  Pick<
    StoredMessage,
    "messageId" | "body" | "attributes" | "systemAttributes" | "bodyMd5" | "attributesMd5" | "systemAttributesMd5" | "priority" | "groupId" | "deduplicationId" | "senderId" | "bodyPlain"
  >
>;

/** The columns a receive reads from the row when the content comes from the cache. */
export type MessageState = Pick<
  MessageRow,
  | "seq"
  | "queue_id"
  | "message_id"
  // A redrive (move-tasks.ts) re-enqueues a message as sent at the time of the move.
  | "sent_at_ms"
  | "visible_at_ms"
  | "receive_count"
  | "first_received_at_ms"
  | "receipt_token"
  | "dead_letter_source"
>;

/** Per entry on top of the body and attribute strings: the Map slot, the object, short strings. */
const entryOverheadBytes = 256;

export const defaultMessageCacheBytes = 32 * 1024 * 1024;

/** The part of the budget one queue's remembered messages may hold. */
const queueShareDivisor = 4;

interface Entry {
  content: MessageContent;
  queueId: number;
  cost: number;
}

export class MessageContentCache {
  private readonly entries = new Map<number, Entry>();
  /** Bytes remembered per queue id (the queue a message was sent to). */
  private readonly queueBytes = new Map<number, number>();
  private bytes = 0;
  private readonly queueShareBytes: number;

  constructor(private readonly budgetBytes: number = defaultMessageCacheBytes) {
    this.queueShareBytes = budgetBytes / queueShareDivisor;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Remembers message `seq`, sent to queue `queueId`, unless that queue is filling a backlog. */
  remember(seq: number, content: MessageContent, queueId: number): void {
    if (this.budgetBytes <= 0) return;
    this.forget(seq);
    const cost = sizeOf(content);
    const queued = this.queueBytes.get(queueId) ?? 0;
    if (queued + cost > this.queueShareBytes) return;
    // Full: start over rather than evict one by one. The entries that would go first are the
    // oldest messages, which a queue receives next; a fresh start keeps caching what comes.
    if (this.bytes + cost > this.budgetBytes) this.clear();
    this.entries.set(seq, { content, queueId, cost });
    this.queueBytes.set(queueId, (this.queueBytes.get(queueId) ?? 0) + cost);
    this.bytes += cost;
  }

  /** The content of message `seq` if cached and it is the message `messageId` names. */
  recall(seq: number, messageId: string): MessageContent | undefined {
    const entry = this.entries.get(seq);
    return entry !== undefined && entry.content.messageId === messageId ? entry.content : undefined;
  }

  forget(seq: number): void {
    const entry = this.entries.get(seq);
    if (entry === undefined) return;
    this.entries.delete(seq);
    this.bytes -= entry.cost;
    const left = this.queueBytes.get(entry.queueId)! - entry.cost;
    if (left > 0) this.queueBytes.set(entry.queueId, left);
    else this.queueBytes.delete(entry.queueId);
  }

  clear(): void {
    this.entries.clear();
    this.queueBytes.clear();
    this.bytes = 0;
  }
}

/** A new message's content as a receive returns it: its attributes as a read of the row gives them (attributesAsStored). */
export function contentOf(m: NewMessage): MessageContent {
  return {
    messageId: m.messageId,
    body: m.body,
    attributes: attributesAsStored(m.attributes),
    systemAttributes: attributesAsStored(m.systemAttributes),
    bodyMd5: m.bodyMd5,
    attributesMd5: m.attributesMd5,
    systemAttributesMd5: m.systemAttributesMd5,
    priority: m.priority,
    groupId: m.groupId,
    deduplicationId: m.deduplicationId,
    senderId: m.senderId,
    bodyPlain: m.bodyPlain,
  };
}

/**
 * The message from a narrow row and its cached content: the same object (keys in the same order)
 * as the store's toMessage of the full row, bodyPlain aside, and the caller's to change (Store's
 * contract), so its attributes are copies of the cached ones.
 */
export function messageOf(state: MessageState, content: MessageContent): StoredMessage {
  const m: StoredMessage = {
    seq: state.seq,
    queueId: state.queue_id,
    messageId: content.messageId,
    body: content.body,
    attributes: attributesAsStored(content.attributes),
    systemAttributes: attributesAsStored(content.systemAttributes),
    bodyMd5: content.bodyMd5,
    attributesMd5: content.attributesMd5,
    systemAttributesMd5: content.systemAttributesMd5,
    sentAtMs: state.sent_at_ms,
    visibleAtMs: state.visible_at_ms,
    priority: content.priority,
    groupId: content.groupId,
    deduplicationId: content.deduplicationId,
    senderId: content.senderId,
    receiveCount: state.receive_count,
    firstReceivedAtMs: state.first_received_at_ms ?? undefined,
    receiptToken: state.receipt_token ?? undefined,
    deadLetterSourceQueueName: state.dead_letter_source ?? undefined,
  };
  // Only what the send knew: otherwise the message is what a read of its row gives.
  if (content.bodyPlain === true) m.bodyPlain = true;
  return m;
}

function attributesSize(attributes: MessageAttributes): number {
  let n = 0;
  for (const [name, v] of Object.entries(attributes)) n += name.length + v.dataType.length + (v.stringValue?.length ?? v.binaryValue?.byteLength ?? 0);
  return n;
}

function sizeOf(c: MessageContent): number {
  // UTF-16 code units × 2 over-counts one-byte strings; a budget that errs high is fine.
  return entryOverheadBytes + 2 * (c.body.length + attributesSize(c.attributes) + attributesSize(c.systemAttributes));
}
