/**
 * Group commit: write operations that arrive in the same event-loop turn (or, when one of them
 * asks, the I/O poll after it) share one transaction and so one fsync. Each operation runs in its
 * own savepoint, so one failing operation rolls back alone while the others commit; the first
 * needs none (undoing the transaction undoes only it), so it runs without one. Callers are
 * answered only once their commit is on disk: after COMMIT returned with synchronous=FULL, or —
 * with a WalSyncer (synchronous=NORMAL) — after the WAL sync that followed the commit, while the
 * next group already runs. Either way an acknowledged write is durable. A group that changed
 * nothing (empty receives and leases, refused operations) asks for no sync of its own: its
 * callers wait only for the sync covering the commits before it, which they may have read.
 */
import type Database from "better-sqlite3";
import type { WalSyncer } from "./wal-syncer.js";

export interface RunOptions {
  /**
   * Commit this write's group after one more poll for I/O, so requests that arrived while this
   * turn ran join it (and its sync) instead of waiting for the next group. For writes whose
   * partners are known to be on their way: a job worker's report, and the submits its last
   * answer set off, arrive together. Not for every write: a saturated server answering SQS
   * requests only pays the extra turn.
   */
  afterNextPoll?: boolean;
  /**
   * This write neither reads nor writes what the group's deferred writes (deferWrites) hold, so
   * they may stay deferred across it. Without it they are written before this write runs.
   */
  besideDeferred?: boolean;
}

interface PendingOp {
  run: () => unknown;
  besideDeferred: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommitter {
  private pending: PendingOp[] = [];
  private scheduled = false;
  /** A write of the pending group asked for one more I/O poll before its commit (RunOptions). */
  private pollFirst = false;
  /** The pending group had that poll already: a group waits for one at most. */
  private polledOnce = false;
  private closed = false;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  /** Rows changed by this connection so far (rolled-back ones included: it errs towards a sync). */
  private readonly totalChanges: Database.Statement<[], number>;
  /** Transactions committed; exposed for tests and metrics. */
  transactions = 0;
  /**
   * Asked before each group is written: a promise to wait for first (the WAL checkpointer's last
   * pass before the WAL starts over: wal-checkpointer.ts), or undefined to write now.
   */
  holdWrites?: () => Promise<void> | undefined;
  /** Told of each commit: how long its transaction took (BEGIN to COMMIT, no fsync) and how many writes it carried. */
  onCommitted?: (commit: { seconds: number; writes: number }) => void;
  private groups = 0;
  /** While a group is being written: what its writes deferred to its end (atEnd). */
  private endOps: Array<() => void> | undefined;
  /** Writes left for later in the group being written (deferWrites), by whoever left them. */
  private deferred: Array<() => void> = [];
  /** What the group being written asked to run once it is on disk (onDurable). */
  private durableOps: Array<() => void> = [];

  constructor(
    private readonly db: Database.Database,
    private readonly syncer?: WalSyncer,
    /** Each write in a transaction of its own, committed before run() returns (SqliteStoreOptions.commitPerCall). */
    private readonly perCall = false,
  ) {
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.commit = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
    this.savepoint = db.prepare("SAVEPOINT op");
    this.release = db.prepare("RELEASE op");
    this.rollbackTo = db.prepare("ROLLBACK TO op");
    this.totalChanges = db.prepare<[], number>("SELECT total_changes()").pluck();
  }

  run<T>(op: () => T, options: RunOptions = {}): Promise<T> {
    if (this.closed) return Promise.reject(new Error("store is closed"));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run: op, besideDeferred: options.besideDeferred === true, resolve: resolve as (v: unknown) => void, reject });
      if (this.perCall) return this.flush();
      if (options.afterNextPoll) this.pollFirst = true;
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.onImmediate);
      }
    });
  }

  /** The scheduled flush; once per group it gives way to one more I/O poll if a write asked for it. */
  private readonly onImmediate = (): void => {
    if (this.pollFirst && !this.polledOnce) {
      // That poll doesn't block while an immediate is pending: an idle server pays one turn.
      this.polledOnce = true;
      setImmediate(this.onImmediate);
      return;
    }
    // Writes wait; the event loop doesn't: requests keep coming in and join the group.
    const held = this.holdWrites?.();
    if (held) {
      void held.then(this.onImmediate);
      return;
    }
    this.flush();
  };

  /** Numbers the groups as they are written (failed ones too): which group a write runs in. */
  get group(): number {
    return this.groups;
  }

  /**
   * From inside a write: runs `op` in the same transaction after every other write of the group
   * (in a savepoint of its own: a failure undoes it alone, and is `op`'s to report). A submit's
   * handoff lease uses it, so the lease sees every job the group inserts, not only those before it.
   */
  atEnd(op: () => void): void {
    if (!this.endOps) throw new Error("atEnd() is for a write that is running");
    this.endOps.push(op);
  }

  /**
   * From inside a write: `write` does what this write left undone, later in the same transaction —
   * before the first later write of the group that isn't `besideDeferred`, else after the group's
   * atEnd steps — in a savepoint of its own (a failure undoes it alone, and is `write`'s to
   * report). Submits use it: the atEnd lease takes them as they are inserted (jobs-store.ts).
   */
  deferWrites(write: () => void): void {
    if (!this.endOps) throw new Error("deferWrites() is for a write that is running");
    this.deferred.push(write);
  }

  /**
   * From inside a write: runs `op` once the group's commit is on disk — before its writes are
   * answered — or once the group is rolled back (nothing of it is left to wait for). Not after
   * a failed sync: what it wrote may be gone. The event log uses it to keep its readers off
   * what is committed but not yet synced (event-log.ts).
   */
  onDurable(op: () => void): void {
    if (!this.endOps) throw new Error("onDurable() is for a write that is running");
    this.durableOps.push(op);
  }

  /** Runs everything pending now, in one transaction. */
  flush(): void {
    this.scheduled = false;
    this.pollFirst = false;
    this.polledOnce = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    this.groups++;
    const outcomes: Array<{ ok: boolean; value: unknown }> = [];
    let changed: boolean;
    const startMs = this.onCommitted ? performance.now() : 0;
    let durableOps: Array<() => void> = [];
    try {
      const changesBefore = this.totalChanges.get()!;
      this.begin.run();
      const endOps: Array<() => void> = [];
      this.endOps = endOps;
      try {
        for (const [i, op] of batch.entries()) {
          if (!op.besideDeferred) this.writeDeferred();
          outcomes.push(i === 0 ? this.first(op.run) : this.inSavepoint(op.run));
        }
        // A deferred step's failure is its own to report (atEnd, deferWrites): here it is only undone.
        for (const op of endOps) this.inSavepoint(op);
        this.writeDeferred();
      } finally {
        this.endOps = undefined;
        this.deferred = [];
        durableOps = this.durableOps;
        this.durableOps = [];
      }
      changed = this.totalChanges.get()! !== changesBefore;
      this.commit.run();
      this.transactions++;
      this.onCommitted?.({ seconds: (performance.now() - startMs) / 1000, writes: batch.length });
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      for (const op of durableOps) op();
      for (const op of batch) op.reject(error);
      return;
    }
    const settle = (syncError: Error | null): void => {
      if (!syncError) for (const op of durableOps) op();
      batch.forEach((op, i) => {
        const outcome = outcomes[i]!;
        if (syncError) op.reject(syncError);
        else if (outcome.ok) op.resolve(outcome.value);
        else op.reject(outcome.value);
      });
    };
    if (!this.syncer) return settle(null);
    if (changed) this.syncer.committed();
    this.syncer.afterSync(settle);
  }

  private writeDeferred(): void {
    if (this.deferred.length === 0) return;
    const writes = this.deferred;
    this.deferred = [];
    for (const write of writes) this.inSavepoint(write);
  }

  /**
   * Runs the group's first write, in the transaction just begun: if it throws, the transaction is
   * rolled back and begun again, which undoes that write alone and keeps SQLite from copying every
   * page it changes into a savepoint's journal.
   */
  private first(op: () => unknown): { ok: boolean; value: unknown } {
    try {
      return { ok: true, value: op() };
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      this.begin.run();
      return { ok: false, value: error };
    }
  }

  /** Runs `op` in a savepoint of its own: if it throws, what it wrote is undone and the rest of the transaction stands. */
  private inSavepoint(op: () => unknown): { ok: boolean; value: unknown } {
    this.savepoint.run();
    try {
      const value = op();
      this.release.run();
      return { ok: true, value };
    } catch (error) {
      this.rollbackTo.run();
      this.release.run();
      return { ok: false, value: error };
    }
  }

  /**
   * Resolves once everything committed so far is on disk. A read answered after this can't show
   * a write that a crash could still take back.
   */
  durable(): Promise<void> {
    return this.syncer ? this.syncer.durable() : Promise.resolve();
  }

  /** Flushes what is pending and refuses further writes. */
  close(): void {
    this.flush();
    this.closed = true;
  }
}
