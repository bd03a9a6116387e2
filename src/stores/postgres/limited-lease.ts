/**
 * What a job lease needs beyond the plain ready order on PostgreSQL, inside its transaction: the
 * queue's limits on starting jobs (core's lease-limits.ts decides from the running count and the
 * token bucket read here) and fair sharing between tenants. Across nodes:
 * - limits: every limited lease of a queue first takes the queue's lease lock (a transaction-level
 *   advisory lock, held to commit), then counts and reads the bucket in later statements. So two
 *   nodes' leases run one after the other: the second counts the first's jobs, and spends from the
 *   bucket the first left. Jobs leave `running` without it (that only frees slots).
 * - tenants: a tenant's jobs are its message group; a lease serves the least-served ready tenants
 *   first, one job each per round (docs/fair-queues.md), locking their group rows (FOR NO KEY
 *   UPDATE SKIP LOCKED: a tenant another node is serving right now is passed by; submits, which
 *   key-share lock them, are not waited for) and counting what it served in them.
 * Lock order, against deadlocks: the queue's lease lock first, then rows, then the event log's lock.
 */
import type { JobLeaseParams, JobLeaseResult } from "../../core/job-store.js";
import { LimitedLease, TenantBuckets, type TenantsHeld, type TokenBucket, hasLeaseLimits } from "../../core/lease-limits.js";
import { roundRobin } from "../../core/fair-rounds.js";
import type { ReadyMessageRow } from "../codecs/message-row.js";
import type { Queryable } from "./db.js";
import { addServed, flowReady, joinUngroupedFlow, readyInFlows } from "./fair-flows.js";

/** The first key of pg_advisory_xact_lock(int, int) for a queue's lease lock; the second is the queue's id. */
const leaseLockClass = 0x511d0;

/**
 * Leases the given ready rows (locked by the caller) in order into `r`: answers the seqs of those
 * that started a job, and how many were passed by untouched (their job changing on another node).
 */
export type LeaseRows = (rows: ReadyMessageRow[], r: JobLeaseResult) => Promise<{ started: Set<number>; passedBy: number }>;

/** The plain lease: ready ungrouped messages in receive order, up to `p.max` in `r`. */
export type LeasePlain = (p: JobLeaseParams, r: JobLeaseResult) => Promise<void>;

/**
 * A labelled lease's requirement classes (those its labels serve), and how their heads join the
 * ungrouped rows read (requirement-classes.ts): in the fair rounds they are part of the flow of
 * jobs without a tenant, as those requiring nothing are.
 */
export interface ServedClasses {
  keys: readonly string[];
  mergeHeads(rows: ReadyMessageRow[], wanted: number): Promise<void>;
}

/**
 * Takes the queue's lease lock when its leases are limited (a no-op otherwise). Taken again in the
 * same transaction, it is held once more: callers take it before anything else, then lease.
 */
export async function lockLimitedLeases(tx: Queryable, p: { queueId: number; limits?: JobLeaseParams["limits"] }): Promise<void> {
  if (!hasLeaseLimits(p.limits)) return;
  await tx.query("SELECT pg_advisory_xact_lock($1, ($2::bigint % 2147483647)::int)", [leaseLockClass, p.queueId]);
}

/**
 * A lease on a queue with limits or tenants: as many as the limits allow now, tenants' jobs in fair
 * order; `r.limited` says what held it back with jobs ready.
 */
export async function leaseLimited(tx: Queryable, p: JobLeaseParams, r: JobLeaseResult, tenants: boolean, leasePlain: LeasePlain, leaseRows: LeaseRows, classes?: ServedClasses): Promise<void> {
  const before = r.leased.length;
  await lockLimitedLeases(tx, p);
  // Statements after the lock: they see every lease that held it before.
  const reads = LimitedLease.reads(p.limits);
  const running = reads.running ? await countRunning(tx, p.queueId) : 0;
  const stored = reads.bucket ? (await tx.query<TokenBucket>("SELECT tokens, at_ms AS \"atMs\" FROM job_queue_buckets WHERE queue_id = $1", [p.queueId])).rows[0] : undefined;
  const lease = new LimitedLease({ wanted: p.max - before, limits: p.limits, nowMs: p.nowMs, running, storedBucket: stored });
  let fair: TenantsHeld | undefined;
  if (lease.allowance.allowed > 0) {
    const bounded = { ...p, max: before + lease.allowance.allowed };
    if (tenants) fair = await leaseFair(tx, bounded, r, leaseRows, classes);
    else await leasePlain(bounded, r);
  }
  const { bucket, hold } = lease.finish(r.leased.length - before, r.leased.length < p.max, fair);
  if (bucket) {
    await tx.query(
      "INSERT INTO job_queue_buckets (queue_id, tokens, at_ms) VALUES ($1, $2, $3) ON CONFLICT (queue_id) DO UPDATE SET tokens = excluded.tokens, at_ms = excluded.at_ms",
      [p.queueId, bucket.tokens, bucket.atMs],
    );
  }
  if (hold) r.limited = hold;
}

async function countRunning(tx: Queryable, queueId: number): Promise<number> {
  const { rows } = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE queue_id = $1 AND status = 'running'", [queueId]);
  return rows[0]!.n;
}

/**
 * Rounds over the ready tenants, least served first, one job per tenant per round, up to
 * `p.max` in `r` (a tenant at its maxRunningPerTenant, or without a token of its rate, is passed by).
 */
async function leaseFair(tx: Queryable, p: JobLeaseParams, r: JobLeaseResult, leaseRows: LeaseRows, classes: ServedClasses | undefined): Promise<TenantsHeld> {
  await joinUngroupedFlow(tx, p.queueId, p.nowMs, p.minSentAtMs, classes?.keys);
  const rate = p.limits?.rateLimitPerTenantPerSecond;
  // The per-tenant rate's buckets: read as tenants come up in the rounds, written at the end.
  const rates = rate === undefined ? undefined : new TenantBuckets(rate, p.nowMs);
  const capped = await leaseFairRounds(tx, p, r, leaseRows, rates, classes);
  if (!rates) return { capped };
  await tx.query("DELETE FROM job_tenant_buckets WHERE queue_id = $1 AND at_ms < $2", [p.queueId, rates.staleBeforeMs()]);
  const spent = rates.spent();
  if (spent.length > 0) {
    await tx.query(
      `INSERT INTO job_tenant_buckets (queue_id, tenant, tokens, at_ms) SELECT $1, t.tenant, t.tokens, t.at_ms FROM unnest($2::text[], $3::float8[], $4::bigint[]) AS t (tenant, tokens, at_ms)
       ON CONFLICT (queue_id, tenant) DO UPDATE SET tokens = excluded.tokens, at_ms = excluded.at_ms`,
      [p.queueId, spent.map(([t]) => t), spent.map(([, b]) => b.tokens), spent.map(([, b]) => b.atMs)],
    );
  }
  return { capped, retryAtMs: rates.retryAtMs };
}

/** leaseFair's rounds; answers whether a tenant was passed by for its cap while it had a job ready. */
async function leaseFairRounds(
  tx: Queryable,
  p: JobLeaseParams,
  r: JobLeaseResult,
  leaseRows: LeaseRows,
  rates: TenantBuckets | undefined,
  classes: ServedClasses | undefined,
): Promise<boolean> {
  const cap = p.limits?.maxRunningPerTenant ?? null;
  // Tenants passed by for their rate this lease: the next round's query leaves them out.
  const heldBack: string[] = [];
  for (;;) {
    const wanted = p.max - r.leased.length;
    if (wanted <= 0) return false;
    // The first round serves at most `wanted` tenants: the least-served ready ones, with room
    // under their cap (counted on the latest rows: this statement comes after the lease lock).
    const { rows: flows } = await tx.query<{ group_id: string; room: number | null }>(
      `SELECT g.group_id, CASE WHEN $4::int IS NULL OR g.group_id = '' THEN NULL ELSE $4 - c.running END AS room
       FROM message_groups g
       CROSS JOIN LATERAL (SELECT count(*)::int AS running FROM jobs j WHERE j.queue_id = $1 AND j.tenant = g.group_id AND j.status = 'running' AND j.tenant IS NOT NULL) c
       WHERE g.queue_id = $1
         AND ($4::int IS NULL OR g.group_id = '' OR c.running < $4)
         AND ${classes ? flowReady("$7") : flowReady()} AND g.group_id <> ALL ($6::text[])
       ORDER BY g.served, g.group_id LIMIT $5 FOR NO KEY UPDATE OF g SKIP LOCKED`,
      [p.queueId, p.nowMs, p.minSentAtMs, cap, wanted, heldBack, ...(classes ? [classes.keys] : [])],
    );
    if (flows.length === 0) return cap !== null && (await cappedTenantReady(tx, p, cap));
    const ready: Array<{ flow: string; room?: number }> = flows.map((f) => ({ flow: f.group_id, room: f.room ?? undefined }));
    let served = ready;
    if (rates !== undefined) {
      const unread = rates.unread(ready.flatMap((f) => (f.flow === "" ? [] : [f.flow])));
      if (unread.length > 0) {
        const { rows } = await tx.query<TokenBucket & { tenant: string }>('SELECT tenant, tokens, at_ms AS "atMs" FROM job_tenant_buckets WHERE queue_id = $1 AND tenant = ANY ($2::text[])', [p.queueId, unread]);
        rates.read(unread, rows);
      }
      const admitted = rates.admit(ready);
      served = admitted.admitted;
      heldBack.push(...admitted.heldBack);
    }
    if (served.length === 0) continue;
    // Enough candidates per tenant for the rounds this lease can make (fewer for one near its cap).
    const perFlow = Math.ceil(wanted / served.length);
    const each = served.map((f) => Math.min(perFlow, f.room ?? perFlow));
    const perTenant = await readyInFlows<ReadyMessageRow>(
      tx,
      p,
      served.map((f) => f.flow),
      each,
      "seq, message_id, priority, sent_at_ms, visible_at_ms",
    );
    const ungrouped = served.findIndex((f) => f.flow === "");
    if (classes && ungrouped >= 0) await classes.mergeHeads(perTenant[ungrouped]!, each[ungrouped]!);
    const chosen = roundRobin(perTenant, wanted);
    if (chosen.length === 0) return false;
    // Locked now, visibility checked again on each row's latest version: a job leased meanwhile
    // (by a lease that didn't know of tenants yet) is passed by.
    const { rows: locked } = await tx.query<{ seq: number }>("SELECT seq FROM messages WHERE seq = ANY ($1::bigint[]) AND visible_at_ms <= $2 FOR UPDATE SKIP LOCKED", [
      chosen.map((c) => c.seq),
      p.nowMs,
    ]);
    const lockedSeqs = new Set(locked.map((l) => l.seq));
    const { started, passedBy } = await leaseRows(
      chosen.filter((c) => lockedSeqs.has(c.seq)),
      r,
    );
    const servedBy = new Map<string, number>();
    perTenant.forEach((rows, i) => {
      const n = rows.filter((c) => started.has(c.seq)).length;
      if (n > 0) servedBy.set(served[i]!.flow, n);
    });
    if (rates) for (const [tenant, n] of servedBy) if (tenant !== "") rates.spend(tenant, n);
    await addServed(tx, p.queueId, servedBy);
    // Every row taken leaves the ready set (leased, deleted, hidden) and another round looks again;
    // when none was (all locked or changing elsewhere), this lease is done.
    if (lockedSeqs.size - passedBy === 0) return false;
  }
}

/** Whether a tenant at its cap has a job ready: what held the lease back, if it got fewer than asked. */
async function cappedTenantReady(tx: Queryable, p: JobLeaseParams, cap: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    `SELECT 1 FROM message_groups g WHERE g.queue_id = $1 AND g.group_id <> ''
       AND EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = $1 AND m.group_id = g.group_id AND m.visible_at_ms <= $2 AND m.sent_at_ms >= $3)
       AND (SELECT count(*) FROM jobs j WHERE j.queue_id = $1 AND j.tenant = g.group_id AND j.status = 'running' AND j.tenant IS NOT NULL) >= $4
     LIMIT 1`,
    [p.queueId, p.nowMs, p.minSentAtMs, cap],
  );
  return (rowCount ?? 0) > 0;
}
