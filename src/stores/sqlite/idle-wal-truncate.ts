/**
 * Gives the WAL's disk back when writes are few. SQLite checkpoints the WAL into the database as
 * it goes but keeps the file at its largest (up to ≈ 8 MiB), reused by the next writes; a server
 * holding a backlog with little coming in needs none of it. A TRUNCATE checkpoint empties it at a
 * check that finds fewer than `quietGroups` commits since the one before (and any since the last
 * truncate). Under load the file stays, and its writes never pay for growing it again.
 */
import type Database from "better-sqlite3";

export const walCheckIntervalMs = 2_000;
/** Commits per interval below which the store is quiet enough to truncate (100 a second). */
export const quietGroups = 200;

export class IdleWalTruncate {
  private readonly timer: NodeJS.Timeout | undefined;
  /** The committed-group count at the last check, and at the last truncate. */
  private seenGroup: number;
  private truncatedAtGroup: number;

  constructor(
    private readonly db: Database.Database,
    /** How many groups the store has committed (GroupCommitter.group). */
    private readonly committedGroups: () => number,
    /** The busy timeout the connection runs with, put back after the checkpoint. */
    private readonly busyTimeoutMs: number,
    /** How often to check; 0: never on a timer (a test calls check()). */
    everyMs = walCheckIntervalMs,
  ) {
    this.seenGroup = committedGroups();
    this.truncatedAtGroup = this.seenGroup;
    this.timer = everyMs > 0 ? setInterval(() => this.checkQuietly(), everyMs).unref() : undefined;
  }

  /** One check (the timer's; tests call it): truncates the WAL if quiet; says whether it did. */
  check(): boolean {
    const group = this.committedGroups();
    const quiet = group - this.seenGroup < quietGroups && group !== this.truncatedAtGroup;
    this.seenGroup = group;
    if (!quiet) return false;
    // Never wait on another connection's reader (a backup, another store on the file): a busy
    // checkpoint is tried again at the next check.
    this.db.pragma("busy_timeout = 0");
    try {
      const [result] = this.db.pragma("wal_checkpoint(TRUNCATE)") as Array<{ busy: number }>;
      if (result?.busy !== 0) return false;
      this.truncatedAtGroup = group;
      return true;
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    }
  }

  /** The timer's check: a failed checkpoint (a full disk, say) leaves the WAL for the next one. */
  private checkQuietly(): void {
    try {
      this.check();
    } catch {
      // The WAL stays as it was; nothing committed depends on the truncate.
    }
  }

  close(): void {
    clearInterval(this.timer);
  }
}
