/**
 * Group commit: write operations that arrive in the same event-loop turn share one transaction
 * and so one fsync. Each operation runs in its own savepoint, so one failing operation rolls back
 * alone while the others commit. Callers are answered only after COMMIT returned — i.e. after the
 * WAL reached the disk (synchronous=FULL): an acknowledged write is durable.
 */
import type Database from "better-sqlite3";

interface PendingOp {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class GroupCommitter {
  private pending: PendingOp[] = [];
  private scheduled = false;
  private closed = false;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  /** Transactions committed; exposed for tests and metrics. */
  transactions = 0;

  constructor(private readonly db: Database.Database) {
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.commit = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
    this.savepoint = db.prepare("SAVEPOINT op");
    this.release = db.prepare("RELEASE op");
    this.rollbackTo = db.prepare("ROLLBACK TO op");
  }

  run<T>(op: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error("store is closed"));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run: op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs everything pending now, in one transaction. */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const outcomes: Array<{ ok: boolean; value: unknown }> = [];
    try {
      this.begin.run();
      for (const op of batch) {
        this.savepoint.run();
        try {
          const value = op.run();
          this.release.run();
          outcomes.push({ ok: true, value });
        } catch (error) {
          this.rollbackTo.run();
          this.release.run();
          outcomes.push({ ok: false, value: error });
        }
      }
      this.commit.run();
      this.transactions++;
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      for (const op of batch) op.reject(error);
      return;
    }
    batch.forEach((op, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) op.resolve(outcome.value);
      else op.reject(outcome.value);
    });
  }

  /** Flushes what is pending and refuses further writes. */
  close(): void {
    this.flush();
    this.closed = true;
  }
}
