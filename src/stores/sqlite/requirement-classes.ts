/**
 * Job leases by a labelled worker (core's requirements.ts): the ready messages it may take are
 * those that require nothing and those of each requirement class its labels contain. The classes
 * of a queue are read by skipping through their index (one seek per class, never the backlog),
 * and the servable classes' heads are merged in receive order by one statement per
 * classesPerStatement classes (ready-order.ts): the heads read only the class index (it covers
 * them), and only the rows the merge keeps are read from the table. A worker serving every class
 * of the queue reads one range of the index of all classed messages instead (migration 053).
 */
import type Database from "better-sqlite3";
import type { JobLeaseParams } from "../../core/job-store.js";
import { servableClasses } from "../../core/jobs/requirements.js";
import { firstReady } from "../../core/message-rules.js";
import type { ReadyMessageRow } from "../codecs/message-row.js";
import { readyClassedQuery, readyInClassesQuery } from "./ready-order.js";
import { sizedStatements } from "./sized-statements.js";

/** Classes merged by one statement; a worker serving more has the statements' results merged here. */
const classesPerStatement = 16;

/** The requirement classes a lease's labels serve, and whether they are all the queue has. */
export interface ServedClasses {
  keys: readonly string[];
  every: boolean;
}

const none: ServedClasses = { keys: [], every: false };

/** A ready message, with its requirement class if it has one. */
type ClassedRow = ReadyMessageRow & { req_class?: string };

export class SqliteRequirementClasses {
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      // A loose index scan: each step seeks the next class after the last one.
      classes: db
        .prepare<[number, number], string>(
          `WITH RECURSIVE c(k) AS (
             SELECT (SELECT min(req_class) FROM messages INDEXED BY messages_ready_class WHERE queue_id = ? AND req_class IS NOT NULL)
             UNION ALL
             SELECT (SELECT min(req_class) FROM messages INDEXED BY messages_ready_class WHERE queue_id = ? AND req_class > c.k)
             FROM c WHERE c.k IS NOT NULL)
           SELECT k FROM c WHERE k IS NOT NULL`,
        )
        .pluck(),
      heads: sizedStatements<ClassedRow>(db, readyInClassesQuery),
      classed: db.prepare<[number, number, number, number], ReadyMessageRow>(readyClassedQuery("seq, message_id, priority, sent_at_ms, visible_at_ms")),
    };
  }

  /** The classes of the queue the lease's labels may serve (none without labels). */
  servable(p: JobLeaseParams): ServedClasses {
    if (p.labels === undefined) return none;
    const all = this.sql.classes.all(p.queueId, p.queueId);
    const keys = servableClasses(all, p.labels);
    return { keys, every: keys.length > 0 && keys.length === all.length };
  }

  /**
   * The first `wanted` ready messages, in receive order, of `unlabelled` (those requiring nothing,
   * already read) and of each class. Each class's head is read a little past its even share of
   * `wanted`; only if a class gave all it was asked for could it have had more to give, and its
   * heads are read again, `wanted` each.
   */
  merge(p: JobLeaseParams, served: ServedClasses, unlabelled: ReadyMessageRow[], wanted: number): ReadyMessageRow[] {
    const classes = served.keys;
    if (classes.length === 0) return unlabelled;
    // Serving them all, the worker may take any ready message that requires something: one range
    // of the classed index, in the same receive order as the class heads.
    if (served.every) return this.mergeClassed(p, unlabelled, wanted);
    const share = Math.min(wanted, Math.ceil(wanted / classes.length) + 1);
    let rows = this.mergeHeads(p, classes, unlabelled, wanted, share);
    if (share < wanted && this.someClassGaveAll(rows, share)) rows = this.mergeHeads(p, classes, unlabelled, wanted, wanted);
    return rows;
  }

  private mergeClassed(p: JobLeaseParams, unlabelled: ReadyMessageRow[], wanted: number): ReadyMessageRow[] {
    const classed = this.sql.classed.all(p.queueId, p.nowMs, p.minSentAtMs, wanted);
    if (unlabelled.length === 0) return classed;
    return firstReady([...unlabelled, ...classed], wanted);
  }

  private mergeHeads(p: JobLeaseParams, classes: readonly string[], unlabelled: ReadyMessageRow[], wanted: number, each: number): ClassedRow[] {
    const rows: ClassedRow[] = [...unlabelled];
    for (let i = 0; i < classes.length; i += classesPerStatement) {
      const chunk = classes.slice(i, i + classesPerStatement);
      const params: Record<string, string | number> = { q: p.queueId, now: p.nowMs, min: p.minSentAtMs, each, limit: wanted };
      chunk.forEach((k, c) => (params[`c${c}`] = k));
      rows.push(...this.sql.heads(chunk.length).all(params));
    }
    return firstReady(rows, wanted);
  }

  private someClassGaveAll(rows: readonly ClassedRow[], each: number): boolean {
    const kept = new Map<string, number>();
    for (const row of rows) {
      if (row.req_class === undefined) continue;
      const n = (kept.get(row.req_class) ?? 0) + 1;
      if (n >= each) return true;
      kept.set(row.req_class, n);
    }
    return false;
  }
}
