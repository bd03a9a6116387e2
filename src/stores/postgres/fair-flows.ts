/**
 * Fair sharing's flows (docs/fair-queues.md) on PostgreSQL: message_groups rows, served least
 * first, the ungrouped messages of a queue that has groups as one more flow named ''. Shared by
 * SQS's fair receive (receive.ts) and job leases between tenants (limited-lease.ts).
 */
import type { Queryable } from "./db.js";

/** Whether the queue has message groups (a job queue's tenants): its receives and leases then share it fairly. */
export async function queueHasGroups(q: Queryable, queueId: number): Promise<boolean> {
  const { rowCount } = await q.query("SELECT 1 FROM message_groups WHERE queue_id = $1 AND group_id > '' LIMIT 1", [queueId]);
  return (rowCount ?? 0) > 0;
}

/**
 * When the queue has ungrouped messages ready: the ungrouped flow joins at the lowest count of the
 * groups (it can't bank credit while the queue had no groups, nor fall behind them).
 */
export async function joinUngroupedFlow(tx: Queryable, queueId: number, nowMs: number, minSentAtMs: number): Promise<void> {
  const ungroupedReady = await tx.query("SELECT 1 FROM messages WHERE queue_id = $1 AND group_id IS NULL AND req_class IS NULL AND visible_at_ms <= $2 AND sent_at_ms >= $3 LIMIT 1", [
    queueId,
    nowMs,
    minSentAtMs,
  ]);
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
