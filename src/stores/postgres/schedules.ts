/**
 * Schedules in PostgreSQL: every write a compare-and-set on the version (`UPDATE … WHERE version
 * = $n`), so of many nodes firing one run, one updates the row and the others change nothing. A
 * fire's update and the jobs it creates are one transaction.
 */
import type { JobCreateItem, JobCreateResult } from "../../core/job-store.js";
import type { ScheduleRecord } from "../../core/schedules/schedule.js";
import { type ScheduleStore, type ScheduleWriteResult, recordAfterFire } from "../../core/schedules/schedule-store.js";
import type { Db, Queryable } from "./db.js";
import { queueMustExist } from "./rows.js";
import { scheduleValues, toSchedule } from "../codecs/schedule-row.js";

/** Creates a fire's jobs inside its transaction (jobs-store.ts). */
export type CreateJobsInTx = (tx: Queryable, items: readonly JobCreateItem[], nowMs: number) => Promise<JobCreateResult[]>;

async function writeIn(q: Queryable, schedule: ScheduleRecord, expectedVersion: number | undefined): Promise<ScheduleWriteResult> {
  const values = scheduleValues(schedule);
  const changed =
    expectedVersion === undefined
      ? await q.query("INSERT INTO schedules (account, name, version, next_run_at_ms, record) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account, name) DO NOTHING", values)
      : await q.query("UPDATE schedules SET version = $3, next_run_at_ms = $4, record = $5 WHERE account = $1 AND name = $2 AND version = $6", [...values, expectedVersion]);
  if ((changed.rowCount ?? 0) > 0) return { written: true };
  const { rows } = await q.query<{ record: string }>("SELECT record FROM schedules WHERE account = $1 AND name = $2", [values[0], values[1]]);
  return rows[0] ? { written: false, current: toSchedule(rows[0].record) } : { written: false };
}

export class PostgresSchedules implements ScheduleStore {
  constructor(
    private readonly db: Db,
    private readonly createJobs: CreateJobsInTx,
  ) {}

  async scheduleGet(p: { account?: string; name: string }): Promise<ScheduleRecord | undefined> {
    const { rows } = await this.db.query<{ record: string }>("SELECT record FROM schedules WHERE account = $1 AND name = $2", [p.account ?? "", p.name]);
    return rows[0] ? toSchedule(rows[0].record) : undefined;
  }

  async scheduleList(p: { account?: string; afterName?: string; limit: number }): Promise<ScheduleRecord[]> {
    const { rows } = await this.db.query<{ record: string }>("SELECT record FROM schedules WHERE account = $1 AND name > $2 ORDER BY name LIMIT $3", [
      p.account ?? "",
      p.afterName ?? "",
      p.limit,
    ]);
    return rows.map((r) => toSchedule(r.record));
  }

  scheduleWrite(p: { schedule: ScheduleRecord; expectedVersion?: number }): Promise<ScheduleWriteResult> {
    return writeIn(this.db, p.schedule, p.expectedVersion);
  }

  async scheduleDelete(p: { account?: string; name: string }): Promise<boolean> {
    return ((await this.db.query("DELETE FROM schedules WHERE account = $1 AND name = $2", [p.account ?? "", p.name])).rowCount ?? 0) > 0;
  }

  async scheduleListDue(p: { nowMs: number; limit: number }): Promise<ScheduleRecord[]> {
    const { rows } = await this.db.query<{ record: string }>("SELECT record FROM schedules WHERE next_run_at_ms <= $1 ORDER BY next_run_at_ms LIMIT $2", [p.nowMs, p.limit]);
    return rows.map((r) => toSchedule(r.record));
  }

  async scheduleNextDueAt(): Promise<number | undefined> {
    const { rows } = await this.db.query<{ next: number | null }>("SELECT min(next_run_at_ms) AS next FROM schedules");
    return rows[0]?.next ?? undefined;
  }

  async scheduleFire(p: { schedule: ScheduleRecord; expectedVersion: number; items: JobCreateItem[]; nowMs: number }): Promise<{ fired: false } | { fired: true; results: JobCreateResult[] }> {
    return queueMustExist(p.items[0]?.job.queueName ?? "", () =>
      this.db.transaction(async (tx) => {
        // The row lock this update takes makes a racing node's update wait, then find the version moved.
        if (!(await writeIn(tx, p.schedule, p.expectedVersion)).written) return { fired: false as const };
        const results = await this.createJobs(tx, p.items, p.nowMs);
        const after = recordAfterFire(p.schedule, results);
        if (after) await tx.query("UPDATE schedules SET record = $3 WHERE account = $1 AND name = $2", [p.schedule.account ?? "", p.schedule.name, JSON.stringify(after)]);
        return { fired: true as const, results };
      }),
    );
  }
}
