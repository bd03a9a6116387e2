/**
 * What a job lease needs beyond the plain ready order, inside its write: the queue's limits on
 * starting jobs (the running counts, kept by running-counts.ts, and the token bucket;
 * core's lease-limits.ts decides with them)
 * and fair sharing between tenants. A tenant's jobs are its messages' group (fair queues), so the
 * order is docs/fair-queues.md's: least-served tenant first, one job per tenant per round, a new
 * tenant starting level with the others — and a tenant at its maxRunningPerTenant is passed by.
 */
import type Database from "better-sqlite3";
import type { JobLeaseParams } from "../../core/job-store.js";
import { type LeaseHold, LimitedLease, TenantBuckets, type TenantsHeld, type TokenBucket, hasLeaseLimits, tenantAdmits } from "../../core/lease-limits.js";
import type { ReadyMessageRow } from "../codecs/message-row.js";
import type { RunningCounts } from "./running-counts.js";
import { nextReadyInGroupQuery, readyUngroupedQuery } from "./ready-order.js";
import { SqliteFairFlows } from "./fair-flows.js";
import { ungroupedFlow } from "../../core/fair-rounds.js";

const readyColumns = "seq, message_id, priority, sent_at_ms, visible_at_ms";

export class SqliteLeaseLimits {
  private readonly sql;
  private readonly fair: SqliteFairFlows;

  constructor(
    db: Database.Database,
    private readonly counts: RunningCounts,
  ) {
    this.fair = new SqliteFairFlows(db);
    this.sql = {
      // The counts running-counts.ts keeps; a missing row is counted once and kept from then on.
      running: db.prepare<[number], number>("SELECT running FROM job_queue_running WHERE queue_id = ?").pluck(),
      countRunning: db
        .prepare<[number, number], number>("INSERT INTO job_queue_running (queue_id, running) SELECT ?, count(*) FROM jobs WHERE queue_id = ? AND status = 'running' RETURNING running")
        .pluck(),
      runningInTenant: db.prepare<[number, string], number>("SELECT running FROM job_tenant_running WHERE queue_id = ? AND tenant = ?").pluck(),
      countRunningInTenant: db
        .prepare<[number, string, number, string], number>(
          "INSERT INTO job_tenant_running (queue_id, tenant, running) SELECT ?, ?, count(*) FROM jobs INDEXED BY jobs_running_tenant WHERE queue_id = ? AND tenant = ? AND status = 'running' AND tenant IS NOT NULL RETURNING running",
        )
        .pluck(),
      bucketGet: db.prepare<[number], TokenBucket>("SELECT tokens, at_ms AS atMs FROM job_queue_buckets WHERE queue_id = ?"),
      bucketPut: db.prepare<[number, number, number]>(
        "INSERT INTO job_queue_buckets (queue_id, tokens, at_ms) VALUES (?, ?, ?) ON CONFLICT (queue_id) DO UPDATE SET tokens = excluded.tokens, at_ms = excluded.at_ms",
      ),
      tenantBucketGet: db.prepare<[number, string], TokenBucket>("SELECT tokens, at_ms AS atMs FROM job_tenant_buckets WHERE queue_id = ? AND tenant = ?"),
      tenantBucketPut: db.prepare<[number, string, number, number]>(
        "INSERT INTO job_tenant_buckets (queue_id, tenant, tokens, at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (queue_id, tenant) DO UPDATE SET tokens = excluded.tokens, at_ms = excluded.at_ms",
      ),
      tenantBucketsStale: db.prepare<[number, number]>("DELETE FROM job_tenant_buckets WHERE queue_id = ? AND at_ms < ?"),
      readyInGroup: db.prepare<[number, string, number, number], ReadyMessageRow>(nextReadyInGroupQuery(readyColumns)),
      readyUngrouped: db.prepare<[number, number, number, number], ReadyMessageRow>(readyUngroupedQuery(readyColumns)),
    };
  }

  /** Whether this lease takes the limited path: the queue has limits, or tenants to share it between. */
  applies(p: JobLeaseParams): boolean {
    return hasLeaseLimits(p.limits) || this.fair.hasGroups(p.queueId);
  }

  /** The head of the ready jobs without tenant that require nothing (as a list: none or one). */
  readyUngrouped(p: JobLeaseParams): ReadyMessageRow[] {
    const row = this.sql.readyUngrouped.get(p.queueId, p.nowMs, p.minSentAtMs, 1);
    return row === undefined ? [] : [row];
  }

  hasTenants(queueId: number): boolean {
    return this.fair.hasGroups(queueId);
  }

  /** How many of `wanted` may start now, from the counts and the bucket as this write reads them. */
  begin(p: JobLeaseParams, wanted: number): LimitedLease {
    const reads = LimitedLease.reads(p.limits);
    const running = reads.running ? this.running(p.queueId) : 0;
    const storedBucket = reads.bucket ? this.sql.bucketGet.get(p.queueId) : undefined;
    return new LimitedLease({ wanted, limits: p.limits, nowMs: p.nowMs, running, storedBucket });
  }

  /** Writes the bucket after `started` jobs started; answers what held the lease back, if anything did. */
  end(queueId: number, lease: LimitedLease, started: number, short: boolean, tenants?: TenantsHeld): LeaseHold | undefined {
    const { bucket, hold } = lease.finish(started, short, tenants);
    if (bucket) this.sql.bucketPut.run(queueId, bucket.tokens, bucket.atMs);
    return hold;
  }

  /**
   * Hands ready jobs to `take` in fair order until `n` started (take answers whether the row
   * started a job: a finished job's stale message is only deleted). Answers whether a tenant was
   * passed by for its cap while it had a job ready, and when one passed by for its rate gets a token.
   */
  pickFair(p: JobLeaseParams, n: number, take: (row: ReadyMessageRow) => boolean, nextUngrouped?: () => ReadyMessageRow | undefined): TenantsHeld {
    const ungroupedHead = nextUngrouped ?? (() => this.sql.readyUngrouped.get(p.queueId, p.nowMs, p.minSentAtMs, 1));
    const rounds = this.fair.rounds(p.queueId, n, ungroupedHead() !== undefined);
    const limits = p.limits ?? {};
    const rates = this.tenantBuckets(p);
    let capped = false;
    for (let flow = rounds.next(); flow !== undefined; flow = rounds.next()) {
      const tenant = flow === ungroupedFlow ? undefined : flow;
      if (tenant !== undefined && limits.maxRunningPerTenant !== undefined && !tenantAdmits(this.runningInTenant(p.queueId, tenant), limits)) {
        if (this.sql.readyInGroup.get(p.queueId, tenant, p.nowMs, p.minSentAtMs)) capped = true;
        continue;
      }
      if (tenant !== undefined && rates !== undefined && !rates.admits(tenant)) {
        if (this.sql.readyInGroup.get(p.queueId, tenant, p.nowMs, p.minSentAtMs)) rates.heldBack(tenant);
        continue;
      }
      for (;;) {
        const row = tenant === undefined ? ungroupedHead() : this.sql.readyInGroup.get(p.queueId, tenant, p.nowMs, p.minSentAtMs);
        if (!row) break;
        if (take(row)) {
          if (tenant !== undefined) rates?.spend(tenant);
          rounds.served(flow);
          break;
        }
      }
    }
    this.fair.settle(p.queueId, rounds);
    if (rates === undefined) return { capped };
    this.sql.tenantBucketsStale.run(p.queueId, rates.staleBeforeMs());
    for (const [tenant, bucket] of rates.spent()) this.sql.tenantBucketPut.run(p.queueId, tenant, bucket.tokens, bucket.atMs);
    return { capped, retryAtMs: rates.retryAtMs };
  }

  /** The per-tenant rate's buckets for this lease (undefined when the queue has no such limit). */
  private tenantBuckets(p: JobLeaseParams): TenantBuckets | undefined {
    const rate = p.limits?.rateLimitPerTenantPerSecond;
    if (rate === undefined) return undefined;
    return new TenantBuckets(rate, p.nowMs, (tenant) => this.sql.tenantBucketGet.get(p.queueId, tenant));
  }

  /** The queue's running jobs: its counter row, made (by counting) the first time it is asked for. Inside the lease's write. */
  private running(queueId: number): number {
    const kept = this.sql.running.get(queueId);
    if (kept !== undefined) return kept;
    this.counts.counting(queueId);
    return this.sql.countRunning.get(queueId, queueId)!;
  }

  private runningInTenant(queueId: number, tenant: string): number {
    const kept = this.sql.runningInTenant.get(queueId, tenant);
    if (kept !== undefined) return kept;
    this.counts.counting(queueId);
    return this.sql.countRunningInTenant.get(queueId, tenant, queueId, tenant)!;
  }
}
