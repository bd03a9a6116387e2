/**
 * What a message write decides, written once for every store (the store reads and writes inside
 * its transaction, then asks here): which messages of a send repeat an earlier one's
 * deduplication id, what a visibility change answers, which receipts a delete honoured, how much
 * of a FIFO group a receive may take, which messages it dead-letters, and receive order.
 */
import { limits } from "./limits.js";
import type { NewMessage } from "./message.js";
import type { DeadLetterTarget, QueueStats, ReceiptRef, SendDedup, SentMessage, VisibilityChangeResult } from "./store.js";

/**
 * A FIFO group is held while any message of it is in flight. Receives lease a contiguous run from
 * the group's oldest message, at most receiveMaxMessages long, so in-flight messages are always
 * among its first this many: looking at those is enough.
 */
export const fifoLookahead = limits.receiveMaxMessages;

/** The scope a message's deduplication id is claimed in: its group's ("" without one) for a per-group scope, else the queue's (""). */
export function dedupScopeOf(dedup: SendDedup, m: NewMessage): string {
  return dedup.scope === "messageGroup" ? (m.groupId ?? "") : "";
}

/** Expired deduplication ids or receive attempts a write that records one deletes: the tables stay small without a sweep. */
export const expiredRowsPerWrite = 100;

/**
 * How many of a FIFO group's first messages (by seq, up to fifoLookahead of them, each as
 * [visibleAtMs, receiveCount]) a receive may take at `nowMs`: its leading run of visible ones
 * (a delayed message keeps its place), none while one of them is in flight.
 */
export function fifoTakeable(head: ReadonlyArray<readonly [number, number]>, nowMs: number): number {
  for (const [visibleAtMs, receiveCount] of head) if (visibleAtMs > nowMs && receiveCount > 0) return 0;
  let visible = 0;
  while (visible < head.length && head[visible]![0] <= nowMs) visible++;
  return visible;
}

/** Per message of a send: the index of its send's first message with the same deduplication id (in its scope), or its own. */
export function firstWithDedupId(messages: readonly NewMessage[], dedup: SendDedup): number[] {
  const firstOfKey = new Map<string, number>();
  return messages.map((m, i) => {
    if (m.deduplicationId === undefined) return i;
    const key = `${dedup.scope === "messageGroup" ? (m.groupId ?? "") : ""}\u0000${m.deduplicationId}`;
    const first = firstOfKey.get(key);
    if (first !== undefined) return first;
    firstOfKey.set(key, i);
    return i;
  });
}

/**
 * A send's answers, one per message, from the store's answers for the messages that came first
 * with their deduplication id (`firsts` from firstWithDedupId): a later one is its first's duplicate.
 */
export function withDuplicatesInSend(firsts: readonly number[], sentFirsts: readonly SentMessage[]): SentMessage[] {
  const out: SentMessage[] = [];
  let next = 0;
  firsts.forEach((first, k) => out.push(first === k ? sentFirsts[next++]! : { ...out[first]!, duplicate: true }));
  return out;
}

/** Whether a receive moves a message it found, received `receiveCount` times already, to the dead-letter queue instead of delivering it. */
export function dueForDeadLetter<P extends { deadLetter?: DeadLetterTarget }>(p: P, receiveCount: number): p is P & { deadLetter: DeadLetterTarget } {
  return p.deadLetter !== undefined && receiveCount >= p.deadLetter.maxReceiveCount;
}

/** The message a visibility change finds under a receipt's seq, as it is now. */
export interface LeaseState {
  receiptToken: string | null;
  visibleAtMs: number;
  /** When its current lease began (null: never received). */
  receivedAtMs: number | null;
}

/** What changing `row` (undefined: gone) to `e.visibleAtMs` answers; "changed" means write it. */
export function visibilityChangeOf(p: { nowMs: number; maxLeaseMs?: number; anyReceipt?: boolean }, e: ReceiptRef & { visibleAtMs: number }, row: LeaseState | undefined): VisibilityChangeResult {
  if (!row || (!p.anyReceipt && row.receiptToken !== e.token)) return "notFound";
  if (row.visibleAtMs <= p.nowMs) return "notInFlight";
  if (p.maxLeaseMs !== undefined && row.receivedAtMs !== null && e.visibleAtMs > row.receivedAtMs + p.maxLeaseMs) return "beyondLimit";
  return "changed";
}

/**
 * Per receipt, in order: whether it deleted its message, given what the delete removed (seq →
 * the receipt token it had). A message listed twice counts for the first, as deleting one by one
 * would answer: each one counted is taken out of `removed`.
 */
export function receiptsDeleted(receipts: readonly ReceiptRef[], removed: Map<number, string | null>, anyReceipt: boolean | undefined): boolean[] {
  return receipts.map((r) => {
    const token = removed.get(r.seq);
    if (token === undefined || (!anyReceipt && token !== r.token)) return false;
    removed.delete(r.seq);
    return true;
  });
}

/** A ready message's place in receive order, as a store's row carries it. */
export interface ReadyPlace {
  priority: number;
  visible_at_ms: number;
  seq: number;
}

/** Receive order, every receive's and lease's: priority high first, then the time it became visible, then seq. */
export function comesFirst(a: ReadyPlace, b: ReadyPlace): number {
  return b.priority - a.priority || a.visible_at_ms - b.visible_at_ms || a.seq - b.seq;
}

/** The first `wanted` of ready rows read from several places (a lease's requirement classes), in receive order; sorts `rows`. */
export function firstReady<T extends ReadyPlace>(rows: T[], wanted: number): T[] {
  rows.sort(comesFirst);
  if (rows.length > wanted) rows.length = wanted;
  return rows;
}

/**
 * A queue's stats from a store's counts: the messages it keeps (`total`) less the hidden ones and
 * those past retention (`expired`, which upkeep has not deleted yet) are visible.
 */
export function queueStatsOf(c: { total: number; inFlight: number; delayed: number; expired: number; oldestSentAtMs: number | null | undefined }): QueueStats {
  return { visible: Math.max(0, c.total - c.inFlight - c.delayed - c.expired), inFlight: c.inFlight, delayed: c.delayed, oldestVisibleSentAtMs: c.oldestSentAtMs ?? undefined };
}
