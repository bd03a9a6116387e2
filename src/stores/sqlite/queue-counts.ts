/**
 * A queue's counts and retention slices at a cost that does not grow with its visible backlog:
 * the count migration 015 keeps, less what is hidden (in flight or delayed: the visibility order
 * from now on) and what is past retention (sentBeforeSql's indexes, up to it). These walks
 * are usually short (test/stores/sqlite-backlog-plans.test.ts checks every plan).
 */
import { boundLimit } from "./bound-limit.js";
import { type KeptCounts, keptBytesSql } from "./kept-counts.js";
import { type VisiblePart, mergeVisible, visibleParts } from "./visible-order.js";
import type Database from "better-sqlite3";
import type { QueueStats } from "../../core/store.js";
import { queueStatsOf } from "../../core/message-rules.js";

/**
 * A queue's messages sent before a time, for a retention slice: those whose visibility moved off
 * their send time first (migration 047's index, by send time), then the rest from the visibility
 * order (visible-order.ts), where visible_at_ms = sent_at_ms puts them in send order. Every walk
 * starts at the queue's oldest; `@limit` (-1: all) bounds each and the whole. The delete of a
 * slice and the end of its jobs (job-statements.ts) select with this, so they take the same messages.
 */
export function sentBeforeSql(column: string): string {
  const shifted = `SELECT ${column} FROM (
      SELECT ${column} FROM messages INDEXED BY messages_sent_shifted
      WHERE queue_id = @queueId AND sent_at_ms < @before AND visible_at_ms <> sent_at_ms ORDER BY sent_at_ms, seq ${boundLimit("@limit")})`;
  const asSent = visibleParts.map(
    (part) => `SELECT ${column} FROM (
      SELECT ${column} FROM ${part.from}
      WHERE queue_id = @queueId AND ${part.where} AND visible_at_ms < @before AND visible_at_ms = sent_at_ms ORDER BY visible_at_ms, seq ${boundLimit("@limit")})`,
  );
  return `${[shifted, ...asSent].join(" UNION ALL ")} ${boundLimit("@limit")}`;
}

/** The message of one visibility part that has been visible longest (queueDepth's head). */
const headSql = (part: VisiblePart): string =>
  `SELECT visible_at_ms, seq, sent_at_ms FROM ${part.from}
   WHERE queue_id = @queueId AND ${part.where} AND visible_at_ms <= @now AND sent_at_ms >= @minSent ORDER BY visible_at_ms, seq LIMIT 1`;

export const queueCountsSql = {
  total: "SELECT messages FROM queue_message_counts WHERE queue_id = @queueId",
  hidden: `SELECT coalesce(sum(receive_count > 0), 0) AS inflight, coalesce(sum(receive_count = 0), 0) AS delayed FROM (
             ${visibleParts.map((part) => `SELECT receive_count FROM ${part.from} WHERE queue_id = @queueId AND ${part.where} AND visible_at_ms > @now AND sent_at_ms >= @minSent`).join(" UNION ALL ")})`,
  // Past retention, in flight or not: usually nothing (upkeep deletes them). The parts are
  // disjoint: a message is in the first if its visibility moved off its send time, else in the others.
  expired: `SELECT (SELECT count(*) FROM messages INDEXED BY messages_sent_shifted
                    WHERE queue_id = @queueId AND sent_at_ms < @minSent AND visible_at_ms <> sent_at_ms)
             ${visibleParts.map((part) => `+ (SELECT count(*) FROM ${part.from} WHERE queue_id = @queueId AND ${part.where} AND visible_at_ms < @minSent AND visible_at_ms = sent_at_ms)`).join(" ")}`,
  // The visible message sent first: the oldest of the parts' first.
  oldestSent: `SELECT min(s) FROM (
                 SELECT (SELECT sent_at_ms FROM messages INDEXED BY messages_sent_shifted
                         WHERE queue_id = @queueId AND sent_at_ms >= @minSent AND visible_at_ms <= @now AND visible_at_ms <> sent_at_ms
                         ORDER BY sent_at_ms LIMIT 1) AS s
                 ${visibleParts
                   .map(
                     (part) => `UNION ALL SELECT (SELECT sent_at_ms FROM ${part.from}
                         WHERE queue_id = @queueId AND ${part.where} AND visible_at_ms >= @minSent AND visible_at_ms <= @now AND visible_at_ms = sent_at_ms
                         ORDER BY visible_at_ms, seq LIMIT 1)`,
                   )
                   .join(" ")})`,
  // queueDepth's head of the queue: the message visible longest, one seek per part.
  headCommon: headSql(visibleParts[0]!),
  headClassed: headSql(visibleParts[1]!),
  headOther: headSql(visibleParts[2]!),
  // The oldest first; a slice reads only what it deletes. Its bytes read first, for the kept counts.
  expireSliceBytes: `SELECT total(${keptBytesSql}) FROM messages WHERE seq IN (${sentBeforeSql("seq")})`,
  expireSlice: `DELETE FROM messages WHERE seq IN (${sentBeforeSql("seq")})`,
} as const;

interface HeadRow {
  visible_at_ms: number;
  seq: number;
  sent_at_ms: number;
}

export class SqliteQueueCounts {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly keptCounts: KeptCounts,
  ) {
    this.sql = {
      total: db.prepare<[{ queueId: number }], number>(queueCountsSql.total).pluck(),
      hidden: db.prepare<[{ queueId: number; now: number; minSent: number }], { inflight: number; delayed: number }>(queueCountsSql.hidden),
      expired: db.prepare<[{ queueId: number; minSent: number }], number>(queueCountsSql.expired).pluck(),
      oldestSent: db.prepare<[{ queueId: number; minSent: number; now: number }], number | null>(queueCountsSql.oldestSent).pluck(),
      heads: [queueCountsSql.headCommon, queueCountsSql.headClassed, queueCountsSql.headOther].map((sql) =>
        db.prepare<[{ queueId: number; now: number; minSent: number }], HeadRow>(sql),
      ),
      expireSliceBytes: db.prepare<[{ queueId: number; before: number; limit: number }], number>(queueCountsSql.expireSliceBytes).pluck(),
      expireSlice: db.prepare<[{ queueId: number; before: number; limit: number }]>(queueCountsSql.expireSlice),
    };
  }

  /** `head`: the oldest as queueDepth names it (visible longest) instead of the one sent first. */
  stats(p: { queueId: number; nowMs: number; minSentAtMs: number; head?: boolean }): QueueStats {
    const queueId = p.queueId;
    const total = this.sql.total.get({ queueId }) ?? 0;
    const hidden = this.sql.hidden.get({ queueId, now: p.nowMs, minSent: p.minSentAtMs })!;
    const expired = p.minSentAtMs > 0 ? this.sql.expired.get({ queueId, minSent: p.minSentAtMs })! : 0;
    const oldest = p.head ? this.head({ queueId, now: p.nowMs, minSent: p.minSentAtMs }) : this.sql.oldestSent.get({ queueId, minSent: p.minSentAtMs, now: p.nowMs });
    return queueStatsOf({ total, inFlight: hidden.inflight, delayed: hidden.delayed, expired, oldestSentAtMs: oldest });
  }

  /** The sent time of the message visible longest, from every visibility part. */
  private head(p: { queueId: number; now: number; minSent: number }): number | undefined {
    const [first] = mergeVisible(this.sql.heads.map((head) => head.all(p)), 1);
    return first?.sent_at_ms;
  }

  /** Deletes up to `limit` (-1: all) messages sent before `minSentAtMs`, oldest first; returns how many. */
  expire(queueId: number, minSentAtMs: number, limit: number): number {
    const slice = { queueId, before: minSentAtMs, limit };
    const bytes = this.sql.expireSliceBytes.get(slice)!;
    const deleted = this.sql.expireSlice.run(slice).changes;
    this.keptCounts.removed(queueId, deleted, bytes);
    return deleted;
  }
}
