/**
 * Job leases by a labelled worker on PostgreSQL (core's requirements.ts): the ready messages it
 * may take are those that require nothing and those of each requirement class its labels contain.
 * The queue's classes are read by skipping through their index (one probe per class, never the
 * backlog), and each servable class's head is locked (SKIP LOCKED) and merged in receive order.
 */
import type { JobLeaseParams } from "../../core/job-store.js";
import { requirementClassOf, servableClasses } from "../../core/jobs/requirements.js";
import { firstReady } from "../../core/message-rules.js";
import type { Queryable } from "./db.js";
import type { ReadyMessageRow } from "../codecs/message-row.js";
import { readyOrder } from "./rows.js";

/** A loose index scan over messages_ready_class: each step seeks the class after the last one. */
const classesStatement = `WITH RECURSIVE c(k) AS (
    SELECT (SELECT min(req_class) FROM messages WHERE queue_id = $1 AND group_id IS NULL AND req_class IS NOT NULL)
    UNION ALL
    SELECT (SELECT min(req_class) FROM messages WHERE queue_id = $1 AND group_id IS NULL AND req_class IS NOT NULL AND req_class > c.k)
    FROM c WHERE c.k IS NOT NULL)
  SELECT k FROM c WHERE k IS NOT NULL`;

/**
 * The head of each class, `$4` rows each, locked: a row locked but not among the first `wanted`
 * merged stays locked to this transaction's end (another lease then passes it by, never loses it).
 */
const classHeadsStatement = `SELECT h.seq, h.message_id, h.priority, h.sent_at_ms, h.visible_at_ms
  FROM unnest($5::text[]) AS c (k)
  CROSS JOIN LATERAL (
    SELECT seq, message_id, priority, sent_at_ms, visible_at_ms FROM messages
    WHERE queue_id = $1 AND group_id IS NULL AND req_class = c.k AND visible_at_ms <= $2 AND sent_at_ms >= $3
    ORDER BY ${readyOrder} LIMIT $4 FOR UPDATE SKIP LOCKED) h`;

/** The classes of the queue the lease's labels may serve (none without labels: no query). */
export async function servableClassesOf(tx: Queryable, p: JobLeaseParams): Promise<string[]> {
  if (p.labels === undefined) return [];
  const { rows } = await tx.query<{ k: string }>(classesStatement, [p.queueId]);
  return servableClasses(
    rows.map((r) => r.k),
    p.labels,
  );
}

/** Adds each class's ready head to `rows` (those requiring nothing, read), keeping the first `wanted` in receive order. */
export async function mergeClassHeads(tx: Queryable, p: JobLeaseParams, classes: readonly string[], rows: ReadyMessageRow[], wanted: number): Promise<void> {
  const heads = await tx.query<ReadyMessageRow>(classHeadsStatement, [p.queueId, p.nowMs, p.minSentAtMs, wanted, classes]);
  if (heads.rows.length === 0) return;
  rows.push(...heads.rows);
  firstReady(rows, wanted);
}

/** Puts a job's just-inserted message in its requirement class. */
export async function setRequirementClass(tx: Queryable, messageSeq: number, requires: Record<string, string>): Promise<void> {
  await tx.query("UPDATE messages SET req_class = $2 WHERE seq = $1", [messageSeq, requirementClassOf(requires)]);
}
