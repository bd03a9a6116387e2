/**
 * The running-job counts a SQLite database keeps for the lease limits (per queue, per tenant),
 * each beside the count of running jobs it stands for, read straight from the file.
 */
import type Database from "better-sqlite3";

export interface RunningCount {
  /** "queue", or the tenant's name. */
  scope: string;
  queueId: number;
  kept: number;
  actual: number;
}

export function runningCounts(db: Database.Database): RunningCount[] {
  return db
    .prepare<[], RunningCount>(
      `SELECT 'queue' AS scope, r.queue_id AS queueId, r.running AS kept,
              (SELECT count(*) FROM jobs j WHERE j.queue_id = r.queue_id AND j.status = 'running') AS actual
         FROM job_queue_running r
       UNION ALL
       SELECT t.tenant, t.queue_id, t.running,
              (SELECT count(*) FROM jobs j WHERE j.queue_id = t.queue_id AND j.tenant = t.tenant AND j.status = 'running')
         FROM job_tenant_running t
       ORDER BY 2, 1`,
    )
    .all();
}
