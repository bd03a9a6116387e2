/**
 * Submits of the group commit being written whose rows are not inserted yet. A group usually
 * holds a worker's report, whose lease runs at the end of the group (atEnd), and the submits its
 * last answer set off; written as they came, each of those jobs was inserted queued and then
 * updated twice over — its job row to running, its message to in flight — by the lease a moment
 * later in the same transaction. Deferred, the lease takes them as they are inserted: one INSERT
 * per row instead of INSERT + SELECT + UPDATE (measured: docs/benchmarks-history.md, "Submits written at
 * the end of their group"). Whatever no lease takes is inserted queued, before the first later
 * write of the group that could see it, or after the group's atEnd steps (GroupCommitter
 * deferWrites); either way in the same transaction, so nothing about durability changes.
 */
import type { JobRecord } from "../../core/job.js";
import type { NewMessage } from "../../core/message.js";
import { type ReadyPlace, comesFirst } from "../../core/message-rules.js";

export interface DeferredCreate {
  /** The job as submitted (queued): what its submit answers; seq and messageSeq are set once written. */
  readonly job: JobRecord;
  readonly message: NewMessage;
  /** Its place in receive order: its message's, after every row of the table at the same place (it has no seq yet). */
  readonly place: ReadyPlace;
  /** Taken by a lease of this group, which wrote its rows already leased. */
  taken: boolean;
  /** Writing it failed: its submit fails with this error. */
  failure?: { error: unknown };
}

export class DeferredCreates {
  private entries: DeferredCreate[] = [];
  private byId = new Map<string, DeferredCreate>();
  /** Queues known to exist since the entries began (queueChecked). */
  private existingQueues = new Set<number>();
  /**
   * The group commit the entries belong to; -1 once they are written. Any other write of the group
   * runs after they are (GroupCommitter.deferWrites) and may delete a queue, so what was known of
   * queues goes with them. A group that failed before writing them leaves them stale: they were
   * rejected with it.
   */
  private group = -1;

  /** Whether a queue exists, asked once while the entries last: `exists` runs for the first submit to it. */
  queueChecked(group: number, queueId: number, exists: () => boolean): boolean {
    this.enter(group);
    if (this.existingQueues.has(queueId)) return true;
    if (!exists()) return false;
    this.existingQueues.add(queueId);
    return true;
  }

  /**
   * Adds a submit of group `group`; `first` when no entry waits to be written (the caller then
   * arranges for them to be: deferWrites).
   */
  add(group: number, job: JobRecord, message: NewMessage): { entry: DeferredCreate; first: boolean } {
    this.enter(group);
    const first = this.entries.length === 0;
    const place = { priority: message.priority, visible_at_ms: message.visibleAtMs, seq: Number.MAX_SAFE_INTEGER };
    const entry: DeferredCreate = { job, message, place, taken: false };
    this.entries.push(entry);
    this.byId.set(job.id, entry);
    return { entry, first };
  }

  /** Takes back entries of a write that failed after adding them (its savepoint undid the rest of it). */
  withdraw(entries: readonly DeferredCreate[]): void {
    if (entries.length === 0) return;
    const gone = new Set(entries);
    this.entries = this.entries.filter((e) => !gone.has(e));
    for (const e of entries) this.byId.delete(e.job.id);
  }

  /** A deferred job by id (for the group's own idempotency checks and acks), written or not. */
  job(id: string): JobRecord | undefined {
    return this.byId.get(id)?.job;
  }

  /**
   * The untaken submits of a queue that a lease at `nowMs` may take, in receive order — priority
   * high to low, then the time they became visible, then the order they came in — at most `limit`.
   */
  ready(queueId: number, nowMs: number, minSentAtMs: number, limit: number): DeferredCreate[] {
    const ready = this.entries.filter((e) => !e.taken && e.job.queueId === queueId && e.message.visibleAtMs <= nowMs && e.message.sentAtMs >= minSentAtMs);
    // Array.prototype.sort is stable: equal places keep the order the submits came in.
    ready.sort((a, b) => comesFirst(a.place, b.place));
    return ready.slice(0, limit);
  }

  /** Hands over every untaken entry to be written, and forgets them all. */
  drain(): DeferredCreate[] {
    const untaken = this.entries.filter((e) => !e.taken);
    this.reset(-1);
    return untaken;
  }

  private enter(group: number): void {
    if (group !== this.group) this.reset(group);
  }

  private reset(group: number): void {
    this.entries = [];
    // New collections, not clear(): V8 leaves a cleared Map's old table holding its entries and
    // pointing at the new one, so a long-lived Map kept every group's submits alive through
    // scavenges into the old generation (docs/benchmarks-history.md, "Garbage that outlived its group").
    this.byId = new Map();
    this.existingQueues = new Set();
    this.group = group;
  }
}

/** Whether a deferred submit comes before a ready row of the table in receive order (core's comesFirst). */
export function comesBefore(entry: DeferredCreate, row: ReadyPlace): boolean {
  return comesFirst(entry.place, row) < 0;
}
