/**
 * The durable job event log in SQLite (core: job-event-log.ts). Appends run inside the job
 * transitions' writes (jobs-store.ts), with ids the log hands out (nextId), so with one writer they
 * become visible in order. Reads join the job for its input; pruning deletes the oldest prefix by age.
 * Reads stop below the first event whose commit isn't synced yet (with pipelined syncs a commit
 * is visible before its fsync ends): an event stream never shows an id a crash could take back
 * and hand out again, and needs no sync barrier of its own to wait for.
 */
import type Database from "better-sqlite3";
import { type JobEventLog, type LoggedJobEvent, prunedPrefix } from "../../core/job-event-log.js";
import type { JobEventType, JobRecord } from "../../core/job.js";
import { boundLimit } from "./bound-limit.js";
import type { GroupCommitter } from "./group-commit.js";
import { jobInputSql } from "./job-rows.js";
import { type JobEventRow, toJobEvent } from "../codecs/job-event-row.js";

type Nullable = string | null;

const select = `SELECT e.id, e.at_ms, e.account, e.queue_name, e.job_id, e.type, e.job, e.output, ${jobInputSql("j")} AS input
  FROM job_events e LEFT JOIN jobs j ON j.id = e.job_id WHERE e.id > ? AND e.id <= ?`;

export class SqliteEventLog implements JobEventLog {
  private readonly sql;
  /** The group commit whose transaction `lastId` was read in (nextId). */
  private idGroup = -1;
  private lastId = 0;
  /** The first id of each group that appended events and isn't on disk yet, oldest first. */
  private readonly unsynced: number[] = [];

  constructor(db: Database.Database, private readonly writes: GroupCommitter) {
    this.sql = {
      append: db.prepare<[number, number, string, string, string, string, string, string | null]>(
        "INSERT INTO job_events (id, at_ms, account, queue_name, job_id, type, job, output) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      ),
      // Each filter is matched when given and skipped when NULL: one statement for every combination.
      filtered: db.prepare<[number, number, Nullable, Nullable, Nullable, Nullable, Nullable, Nullable, number], JobEventRow>(
        `${select} AND (? IS NULL OR e.account = ?) AND (? IS NULL OR e.queue_name = ?) AND (? IS NULL OR e.job_id = ?) ORDER BY e.id ${boundLimit()}`,
      ),
      all: db.prepare<[number, number, number], JobEventRow>(`${select} ORDER BY e.id ${boundLimit()}`),
      // The highest id ever used: the newest row's, or the floor's once every row up to it is pruned.
      head: db.prepare<[], number>("SELECT max(coalesce((SELECT max(id) FROM job_events), 0), pruned_through_id) FROM job_event_floor").pluck(),
      floor: db.prepare<[], number>("SELECT pruned_through_id FROM job_event_floor").pluck(),
      oldest: db.prepare<[number], { id: number; atMs: number }>(`SELECT id, at_ms AS atMs FROM job_events ORDER BY id ${boundLimit()}`),
      prune: db.prepare<[number]>("DELETE FROM job_events WHERE id <= ?"),
      setFloor: db.prepare<[number]>("UPDATE job_event_floor SET pruned_through_id = max(pruned_through_id, ?)"),
    };
  }

  /** Inside a write: appends one event of `job` (its snapshot made by eventSnapshotJson); answers its id. */
  appendOne(job: JobRecord, snapshot: string, type: JobEventType, atMs: number): number {
    const id = this.nextId();
    this.sql.append.run(id, atMs, job.account ?? "", job.queueName, job.id, type, snapshot, job.outputJson ?? null);
    return id;
  }

  /**
   * The next id, above every id ever used (migration 030 says why not AUTOINCREMENT): read once per
   * transaction (another handle on the file may have appended between two), then counted up. An id
   * whose write was rolled back was never seen, so it may be handed out again; a committed one never is.
   */
  private nextId(): number {
    const group = this.writes.group;
    if (this.idGroup !== group) {
      this.idGroup = group;
      this.lastId = this.sql.head.get()!;
      const first = this.lastId + 1;
      this.unsynced.push(first);
      this.writes.onDurable(() => this.unsynced.splice(this.unsynced.indexOf(first), 1));
    }
    return ++this.lastId;
  }

  /** The highest id a reader may see: below the oldest group not yet on disk. */
  private visibleThroughId(): number {
    return this.unsynced.length === 0 ? Number.MAX_SAFE_INTEGER : this.unsynced[0]! - 1;
  }

  async jobEventList(p: { afterId: number; throughId?: number; limit: number; account?: string; queueName?: string; jobId?: string }): Promise<LoggedJobEvent[]> {
    const through = Math.min(p.throughId ?? Number.MAX_SAFE_INTEGER, this.visibleThroughId());
    const unfiltered = p.account === undefined && p.queueName === undefined && p.jobId === undefined;
    const rows = unfiltered ? this.sql.all.all(p.afterId, through, p.limit) : this.filtered(p.afterId, through, p.account ?? null, p.queueName ?? null, p.jobId ?? null, p.limit);
    return rows.map(toJobEvent);
  }

  private filtered(afterId: number, through: number, account: string | null, queueName: string | null, jobId: string | null, limit: number): JobEventRow[] {
    return this.sql.filtered.all(afterId, through, account, account, queueName, queueName, jobId, jobId, limit);
  }

  async jobEventBounds(): Promise<{ headId: number; floorId: number }> {
    return { headId: Math.min(this.sql.head.get()!, this.visibleThroughId()), floorId: this.sql.floor.get()! };
  }

  async jobEventPrune(p: { beforeAtMs: number; limit: number }): Promise<number> {
    return this.writes.run(() => {
      const pruned = prunedPrefix(this.sql.oldest.all(p.limit), p.beforeAtMs);
      if (!pruned) return 0;
      this.sql.prune.run(pruned.throughId);
      this.sql.setFloor.run(pruned.throughId);
      return pruned.count;
    });
  }
}
