/**
 * Job leases by a labelled worker (core's requirements.ts): the ready messages it may take are
 * those that require nothing and those of each requirement class its labels contain. The classes
 * of a queue are read by skipping through their index (one seek per class, never the backlog),
 * and each servable class's head is probed: a k-way merge of index heads in receive order. The
 * probes read only the class index (it covers them); the rows the merge keeps are then read.
 */
import type Database from "better-sqlite3";
import type { JobLeaseParams } from "../../core/job-store.js";
import { servableClasses } from "../../core/jobs/requirements.js";
import type { ReadyMessageRow } from "./job-statements.js";
import { readyInClassQuery } from "./ready-order.js";

/** A class head's position in receive order, as its index holds it: [seq, priority, visible_at_ms, sent_at_ms]. */
type Head = [number, number, number, number];

/** Receive order: priority high first, then visibility time, then seq. */
function comesFirst(a: ReadyMessageRow, b: ReadyMessageRow): number {
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
             SELECT (SELECT min(req_class) FROM messages INDEXED BY messages_ready_class WHERE queue_id = ? AND req_class IS NOT NULL)
             UNION ALL
             SELECT (SELECT min(req_class) FROM messages INDEXED BY messages_ready_class WHERE queue_id = ? AND req_class > c.k)
             FROM c WHERE c.k IS NOT NULL)
           SELECT k FROM c WHERE k IS NOT NULL`,
        )
        .pluck(),
      heads: db.prepare<[number, string, number, number, number], Head>(readyInClassQuery("seq, priority, visible_at_ms, sent_at_ms")).raw(),
      messageId: db.prepare<[number], string>("SELECT message_id FROM messages WHERE seq = ?").pluck(),
    };
  }

  /** The classes of the queue the lease's labels may serve (none without labels). */
  servable(p: JobLeaseParams): string[] {
    if (p.labels === undefined) return [];
    return servableClasses(this.sql.classes.all(p.queueId, p.queueId), p.labels);
  }

  /**
   * The first `wanted` ready messages, in receive order, of `unlabelled` (those requiring nothing,
   * already read) and of each class: at most `wanted` index entries probed per class.
   */
  merge(p: JobLeaseParams, classes: readonly string[], unlabelled: ReadyMessageRow[], wanted: number): ReadyMessageRow[] {
    if (classes.length === 0) return unlabelled;
    const rows: ReadyMessageRow[] = [...unlabelled];
    const fromClasses = new Set<ReadyMessageRow>();
    for (const k of classes) {
      for (const [seq, priority, visibleAtMs, sentAtMs] of this.sql.heads.all(p.queueId, k, p.nowMs, p.minSentAtMs, wanted)) {
        const row: ReadyMessageRow = { seq, message_id: "", priority, sent_at_ms: sentAtMs, visible_at_ms: visibleAtMs };
        rows.push(row);
        fromClasses.add(row);
      }
    }
    rows.sort(comesFirst);
    if (rows.length > wanted) rows.length = wanted;
    // Nothing was written since the probes: each kept head is still its message, now read.
    for (const row of rows) if (fromClasses.has(row)) row.message_id = this.sql.messageId.get(row.seq)!;
    return rows;
  }
}
