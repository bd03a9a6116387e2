/**
 * A queue's counts and retention slices at a cost that does not grow with its visible backlog:
 * the count migration 015 keeps, less what is hidden (in flight or delayed: the visibility index
 * from now on) and what is past retention (the send-time index, migration 023, up to it). Both
 * walks are usually short (test/stores/sqlite-backlog-plans.test.ts checks every plan).
 */
import { boundLimit } from "./bound-limit.js";
import type Database from "better-sqlite3";
import type { QueueStats } from "../../core/store.js";

export const queueCountsSql = {
  total: "SELECT messages FROM queue_message_counts WHERE queue_id = ?",
  hidden: `SELECT coalesce(sum(receive_count > 0), 0) AS inflight, coalesce(sum(receive_count = 0), 0) AS delayed
           FROM messages INDEXED BY messages_visible WHERE queue_id = ? AND visible_at_ms > ? AND sent_at_ms >= ?`,
  // Past retention, in flight or not: index-only, usually nothing (upkeep deletes them).
  expired: "SELECT count(*) FROM messages INDEXED BY messages_sent WHERE queue_id = ? AND sent_at_ms < ?",
  oldestSent: "SELECT sent_at_ms FROM messages INDEXED BY messages_sent WHERE queue_id = ? AND sent_at_ms >= ? AND visible_at_ms <= ? ORDER BY sent_at_ms LIMIT 1",
  // queueDepth's head of the queue: the message visible longest, one seek.
  head: "SELECT sent_at_ms FROM messages INDEXED BY messages_visible WHERE queue_id = ? AND visible_at_ms <= ? AND sent_at_ms >= ? ORDER BY visible_at_ms LIMIT 1",
  // The oldest first; a slice reads only what it deletes. LIMIT -1: all.
  expireSlice: `DELETE FROM messages WHERE seq IN (
                  SELECT seq FROM messages INDEXED BY messages_sent WHERE queue_id = ? AND sent_at_ms < ? ORDER BY sent_at_ms, seq ${boundLimit()})`,
} as const;

export class SqliteQueueCounts {
  private readonly sql;

  constructor(db: Database.Database) {
    this.sql = {
      total: db.prepare<[number], number>(queueCountsSql.total).pluck(),
      hidden: db.prepare<[number, number, number], { inflight: number; delayed: number }>(queueCountsSql.hidden),
      expired: db.prepare<[number, number], number>(queueCountsSql.expired).pluck(),
      oldestSent: db.prepare<[number, number, number], number>(queueCountsSql.oldestSent).pluck(),
      head: db.prepare<[number, number, number], number>(queueCountsSql.head).pluck(),
      expireSlice: db.prepare<[number, number, number]>(queueCountsSql.expireSlice),
    };
  }

  /** `head`: the oldest as queueDepth names it (visible longest) instead of the one sent first. */
  stats(p: { queueId: number; nowMs: number; minSentAtMs: number; head?: boolean }): QueueStats {
    const total = this.sql.total.get(p.queueId) ?? 0;
    const hidden = this.sql.hidden.get(p.queueId, p.nowMs, p.minSentAtMs)!;
    const expired = p.minSentAtMs > 0 ? this.sql.expired.get(p.queueId, p.minSentAtMs)! : 0;
    const oldest = p.head ? this.sql.head.get(p.queueId, p.nowMs, p.minSentAtMs) : this.sql.oldestSent.get(p.queueId, p.minSentAtMs, p.nowMs);
    return {
      visible: Math.max(0, total - hidden.inflight - hidden.delayed - expired),
      inFlight: hidden.inflight,
      delayed: hidden.delayed,
      oldestVisibleSentAtMs: oldest ?? undefined,
    };
  }

  /** Deletes up to `limit` (-1: all) messages sent before `minSentAtMs`, oldest first; returns how many. */
  expire(queueId: number, minSentAtMs: number, limit: number): number {
    return this.sql.expireSlice.run(queueId, minSentAtMs, limit).changes;
  }
}
