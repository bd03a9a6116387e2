/**
 * The running-job counts behind the lease limits (maxRunning, maxRunningPerTenant): one row per
 * queue and per tenant (migration 022), made by the first limited lease that needs one (counting
 * once, in its write) and from then on moved here, in the write of every job change into or out of
 * `running` — so a row that exists is always the true count, also after a crash. Only queues with
 * a row pay for it: which ones have rows is known in memory (every handle on the file in this
 * process shares it, shared-file.ts), so a start or an end on a queue nobody limits costs nothing.
 */
import type Database from "better-sqlite3";
import type { JobRecord } from "../../core/job.js";

export class RunningCounts {
  private readonly sql;

  constructor(
    db: Database.Database,
    /** Queues that may have count rows: every queue that has one, and perhaps some whose row was rolled back. */
    private readonly counted: Set<number>,
  ) {
    this.sql = {
      queue: db.prepare<[number, number]>("UPDATE job_queue_running SET running = running + ? WHERE queue_id = ?"),
      tenant: db.prepare<[number, number, string]>("UPDATE job_tenant_running SET running = running + ? WHERE queue_id = ? AND tenant = ?"),
    };
    for (const queueId of db.prepare<[], number>("SELECT queue_id FROM job_queue_running UNION SELECT queue_id FROM job_tenant_running").pluck().all()) {
      counted.add(queueId);
    }
  }

  /** Before a count row of the queue is made (in the same write): its jobs' changes move it from now on. */
  counting(queueId: number): void {
    this.counted.add(queueId);
  }

  /** Inside a write: a job row written (inserted or updated) from `before` (undefined: a new row) to `after`. */
  changed(before: Pick<JobRecord, "status"> | undefined, after: Pick<JobRecord, "status" | "queueId" | "tenant">): void {
    const was = before?.status === "running";
    const is = after.status === "running";
    if (was !== is && this.counted.has(after.queueId)) this.move(after, is ? 1 : -1);
  }

  private move(job: Pick<JobRecord, "queueId" | "tenant">, by: number): void {
    this.sql.queue.run(by, job.queueId);
    if (job.tenant !== undefined) this.sql.tenant.run(by, job.queueId, job.tenant);
  }
}
