/**
 * Job dependencies (dependsOn) in PostgreSQL: who waits for whom (job_dependencies), read inside
 * the transactions that submit a child or finish a parent. The decisions are core's
 * (dependencies.ts). Across nodes, one rule makes a child's release exact: whoever judges a child
 * holds a lock that the other judges of that child need first, and reads the parents in a later
 * statement (a fresh snapshot in READ COMMITTED):
 * - a submit share-locks the parents it names before reading them, so a parent's end either
 *   commits first (and the submit sees it) or waits for the submit (and then sees its child);
 * - a parent's end locks its waiting children before reading their other parents, so when two
 *   parents end at once on two nodes, the second to get the child sees the first's commit.
 * A parent's end looks for children in its own UPDATE (a fresh snapshot after its row lock), and
 * the event log's lock (event-log.ts, held to commit) is taken after these row locks.
 */
import { type FoundParent, childOnParentDone } from "../../core/jobs/dependencies.js";
import type { JobCreateItem } from "../../core/job-store.js";
import type { JobRecord } from "../../core/job.js";
import type { JobTransition } from "../../core/jobs/transitions.js";
import type { Queryable } from "./db.js";
import { type JobRow, toJob } from "../codecs/job-row.js";

/**
 * Share-locks the jobs that the items name in dependsOn (those that exist; a parent created earlier
 * in the same call is this transaction's own), in id order: two submits never wait on each other.
 */
export async function lockParentsOf(tx: Queryable, items: readonly JobCreateItem[]): Promise<void> {
  const ids = [...new Set(items.flatMap((item) => item.job.dependsOn ?? []))].sort();
  if (ids.length === 0) return;
  await tx.query("SELECT 1 FROM jobs WHERE id = ANY ($1::text[]) ORDER BY id FOR SHARE", [ids]);
}

/** The child waits for each of its parents (and keeps them from being pruned until it has run). */
export async function addDependencies(tx: Queryable, childId: string, parentIds: readonly string[]): Promise<void> {
  await tx.query("INSERT INTO job_dependencies (parent_id, child_id) SELECT p, $2 FROM unnest($1::text[]) AS p ON CONFLICT DO NOTHING", [parentIds, childId]);
}

/** The jobs of `ids` that exist, as parents (a submit's, locked by lockParentsOf; or a waiting child's). */
export async function readParents(tx: Queryable, ids: readonly string[]): Promise<Map<string, FoundParent>> {
  const { rows } = await tx.query<{ id: string; account: string; status: FoundParent["status"]; error: string | null }>("SELECT id, account, status, error FROM jobs WHERE id = ANY ($1::text[])", [ids]);
  return new Map(rows.map((r) => [r.id, { account: r.account, status: r.status, error: r.error === null ? undefined : (JSON.parse(r.error) as FoundParent["error"]) }]));
}

/**
 * The waiting children of `parents` (which ended in this transaction, already written), each
 * locked and judged again by all its parents: queued, or ended like its parent (core's
 * childOnParentDone), with the parent it is told with. Nothing is written here.
 */
export async function childrenReleased(
  tx: Queryable,
  parents: readonly JobRecord[],
  nowMs: number,
  resultTtlOf: (queueId: number) => Promise<number>,
): Promise<Array<{ parentId: string; transition: JobTransition }>> {
  // Locked in id order (two parents' transactions share children without deadlocking); the status
  // filter is checked again on a locked row's latest version.
  const { rows } = await tx.query<JobRow>(
    `SELECT * FROM jobs WHERE status = 'waiting' AND id IN (SELECT child_id FROM job_dependencies WHERE parent_id = ANY ($1::text[]))
     ORDER BY id FOR UPDATE`,
    [parents.map((p) => p.id)],
  );
  if (rows.length === 0) return [];
  const waiting = rows.map(toJob);
  // A later statement than the lock: every other parent's end that committed before it is seen.
  const stored = await readParents(tx, [...new Set(waiting.flatMap((c) => c.dependsOn ?? []))]);
  const endedHere = new Set(parents.map((p) => p.id));
  const out: Array<{ parentId: string; transition: JobTransition }> = [];
  for (const child of waiting) {
    const dependsOn = child.dependsOn ?? [];
    const transition = childOnParentDone(child, (id) => stored.get(id), nowMs, await resultTtlOf(child.queueId));
    // Told with the last of its parents (in dependsOn order) that ended in this transaction.
    if (transition) out.push({ parentId: dependsOn.filter((id) => endedHere.has(id)).at(-1)!, transition });
  }
  return out;
}
