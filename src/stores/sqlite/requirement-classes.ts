/**
 * Job leases by a labelled worker (core's requirements.ts): the ready messages it may take are
 * those that require nothing and those of each requirement class its labels contain. The classes
 * of a queue are read by skipping through their index (one seek per class, never the backlog),
 * and each servable class's head is probed: a k-way merge of index heads in receive order.
 */
import type Database from "better-sqlite3";
import type { JobLeaseParams } from "../../core/job-store.js";
import { servableClasses } from "../../core/jobs/requirements.js";
import type { ReadyMessageRow } from "./job-statements.js";
import { readyInClassQuery } from "./ready-order.js";

const readyColumns = "seq, message_id, priority, sent_at_ms, visible_at_ms";

/** Receive order: priority high first, then visibility time, then seq. */
export function comesFirst(a: ReadyMessageRow, b: ReadyMessageRow): number {
  return b.priority - a.priority || a.visible_at_ms - b.visible_at_ms || a.seq - b.seq;
}

export class SqliteRequirementClasses {
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      // A loose index scan: each step seeks the next class after the last one.
      classes: db
        .prepare<[number, number], string>(
          `WITH RECURSIVE c(k) AS (
             SELECT (SELECT min(req_class) FROM messages INDEXED BY messages_ready_class WHERE queue_id = ? AND group_id IS NULL AND req_class IS NOT NULL)
             UNION ALL
             SELECT (SELECT min(req_class) FROM messages INDEXED BY messages_ready_class WHERE queue_id = ? AND group_id IS NULL AND req_class IS NOT NULL AND req_class > c.k)
             FROM c WHERE c.k IS NOT NULL)
           SELECT k FROM c WHERE k IS NOT NULL`,
        )
        .pluck(),
      readyInClass: db.prepare<[number, string, number, number, number], ReadyMessageRow>(readyInClassQuery(readyColumns)),
    };
  }

  /** The classes of the queue the lease's labels may serve (none without labels). */
  servable(p: JobLeaseParams): string[] {
    if (p.labels === undefined) return [];
    return servableClasses(this.sql.classes.all(p.queueId, p.queueId), p.labels);
  }

  /**
   * The first `wanted` ready messages, in receive order, of `unlabelled` (those requiring nothing,
   * already read) and of each class: at most `wanted` read per class.
   */
  merge(p: JobLeaseParams, classes: readonly string[], unlabelled: ReadyMessageRow[], wanted: number): ReadyMessageRow[] {
    if (classes.length === 0) return unlabelled;
    const rows = [...unlabelled];
    for (const k of classes) rows.push(...this.sql.readyInClass.all(p.queueId, k, p.nowMs, p.minSentAtMs, wanted));
    rows.sort(comesFirst);
    if (rows.length > wanted) rows.length = wanted;
    return rows;
  }
}
