/**
 * Fair sharing's flows (docs/fair-queues.md) on PostgreSQL: message_groups rows, served least
 * first, the ungrouped messages of a queue that has groups as one more flow named ''. Shared by
 * SQS's fair receive (receive.ts) and job leases between tenants (limited-lease.ts).
 */
import type { Queryable } from "./db.js";
import { readyOrder } from "./rows.js";

/**
 * Whether the flow `g` (a message_groups row) has a message ready: the ungrouped flow '' one
 * requiring nothing (or, for a labelled lease, one of the classes in the text[] parameter
 * `classes` names), a group one of its own. Parameters: $1 queue, $2 now, $3 oldest sent time kept.
 */
export function flowReady(classes?: string): string {
  const ready = "m.visible_at_ms <= $2 AND m.sent_at_ms >= $3";
  const ofClasses = classes === undefined ? "" : ` OR EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = $1 AND m.group_id IS NULL AND m.req_class = ANY (${classes}::text[]) AND ${ready})`;
  return `((g.group_id = '' AND (EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = $1 AND m.group_id IS NULL AND m.req_class IS NULL AND ${ready})${ofClasses}))
    OR (g.group_id <> '' AND EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = $1 AND m.group_id = g.group_id AND ${ready})))`;
}

/** The first ready messages of each flow (`each[i]` of `flows[i]` at most), in ready order, one list per flow. */
export async function readyInFlows<R>(tx: Queryable, p: { queueId: number; nowMs: number; minSentAtMs: number }, flows: readonly string[], each: readonly number[], columns: string): Promise<R[][]> {
  const { rows } = await tx.query<R & { flow: number }>(
    `SELECT m.*, f.ord::int AS flow FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS f (group_id, k, ord)
     CROSS JOIN LATERAL (
       (SELECT ${columns} FROM messages
        WHERE f.group_id = '' AND queue_id = $1 AND group_id IS NULL AND req_class IS NULL AND visible_at_ms <= $4 AND sent_at_ms >= $5 ORDER BY ${readyOrder} LIMIT f.k)
       UNION ALL
       (SELECT ${columns} FROM messages
        WHERE f.group_id <> '' AND queue_id = $1 AND group_id = f.group_id AND visible_at_ms <= $4 AND sent_at_ms >= $5 ORDER BY ${readyOrder} LIMIT f.k)
     ) m ORDER BY f.ord, m.priority DESC, m.visible_at_ms, m.seq`,
    [p.queueId, flows, each, p.nowMs, p.minSentAtMs],
  );
  const perFlow: R[][] = flows.map(() => []);
  for (const row of rows) perFlow[row.flow - 1]!.push(row);
  return perFlow;
}

/** Whether the queue has message groups (a job queue's tenants): its receives and leases then share it fairly. */
export async function queueHasGroups(q: Queryable, queueId: number): Promise<boolean> {
  const { rowCount } = await q.query("SELECT 1 FROM message_groups WHERE queue_id = $1 AND group_id > '' LIMIT 1", [queueId]);
  return (rowCount ?? 0) > 0;
}

/**
 * When the queue has ungrouped messages ready (requiring nothing, or of `classes`: those a
 * labelled lease serves): the ungrouped flow joins at the lowest count of the groups (it can't
 * bank credit while the queue had no groups, nor fall behind them).
 */
export async function joinUngroupedFlow(tx: Queryable, queueId: number, nowMs: number, minSentAtMs: number, classes: readonly string[] = []): Promise<void> {
  const ready = "queue_id = $1 AND group_id IS NULL AND visible_at_ms <= $2 AND sent_at_ms >= $3";
  const ungroupedReady =
    classes.length === 0
      ? await tx.query(`SELECT 1 FROM messages WHERE ${ready} AND req_class IS NULL LIMIT 1`, [queueId, nowMs, minSentAtMs])
      : await tx.query(`SELECT 1 FROM messages WHERE ${ready} AND (req_class IS NULL OR req_class = ANY ($4::text[])) LIMIT 1`, [queueId, nowMs, minSentAtMs, classes]);
  if ((ungroupedReady.rowCount ?? 0) === 0) return;
  await tx.query(
    `INSERT INTO message_groups (queue_id, group_id, served)
     SELECT $1, '', coalesce((SELECT min(served) FROM message_groups WHERE queue_id = $1 AND group_id > ''), 0)
     ON CONFLICT (queue_id, group_id) DO NOTHING`,
    [queueId],
  );
  await tx.query(
    `UPDATE message_groups SET served = (SELECT min(served) FROM message_groups WHERE queue_id = $1 AND group_id > '')
     WHERE queue_id = $1 AND group_id = '' AND served < (SELECT min(served) FROM message_groups WHERE queue_id = $1 AND group_id > '')`,
    [queueId],
  );
}

/** Adds what a receive or lease served to each flow's count (rows updated in group order). */
export async function addServed(tx: Queryable, queueId: number, servedBy: ReadonlyMap<string, number>): Promise<void> {
  if (servedBy.size === 0) return;
  const flows = [...servedBy.keys()].sort();
  await tx.query("UPDATE message_groups SET served = served + t.n FROM unnest($2::text[], $3::bigint[]) AS t (g, n) WHERE queue_id = $1 AND group_id = t.g", [
    queueId,
    flows,
    flows.map((f) => servedBy.get(f)!),
  ]);
}

/**
 * A submit of tenants' jobs: their group rows made if new and key-share locked to commit. That
 * keeps a row from being removed (sluice_groups_settle locks it for update first) before the
 * job's message is in, while submits of one tenant, and leases serving it (FOR NO KEY UPDATE),
 * go on beside each other. A row removed between the two statements is made again.
 */
export async function holdTenantGroups(tx: Queryable, queueId: number, tenants: readonly string[]): Promise<void> {
  const groups = [...new Set(tenants)].sort();
  for (;;) {
    await tx.query(
      `INSERT INTO message_groups (queue_id, group_id, served)
       SELECT $1, g, coalesce((SELECT min(served) FROM message_groups WHERE queue_id = $1), 0) FROM unnest($2::text[]) AS g ORDER BY g COLLATE "C"
       ON CONFLICT (queue_id, group_id) DO NOTHING`,
      [queueId, groups],
    );
    const { rowCount } = await tx.query('SELECT 1 FROM message_groups WHERE queue_id = $1 AND group_id = ANY ($2::text[]) ORDER BY group_id FOR KEY SHARE', [queueId, groups]);
    if (rowCount === groups.length) return;
  }
}
