/**
 * Schedules in SQLite: one row per schedule (core's record as JSON, its version and next run as
 * columns). Writes go through the group committer; a fire's compare-and-set and the jobs it
 * creates are one write, so they commit (and sync) together or not at all.
 */
import type Database from "better-sqlite3";
import type { JobCreateItem, JobCreateResult } from "../../core/job-store.js";
import type { ScheduleRecord } from "../../core/schedules/schedule.js";
import { type ScheduleStore, type ScheduleWriteResult, recordAfterFire } from "../../core/schedules/schedule-store.js";
import { scheduleValues, toSchedule } from "../codecs/schedule-row.js";
import { boundLimit } from "./bound-limit.js";
import type { GroupCommitter } from "./group-commit.js";

/** Creates jobs inside the caller's write, now (not deferred to the group's end): the fire's CAS must stand or fall with them. */
export type CreateJobsInWrite = (items: readonly JobCreateItem[], nowMs: number) => JobCreateResult[];

export class SqliteSchedules implements ScheduleStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly writes: GroupCommitter,
    private readonly createJobs: CreateJobsInWrite,
  ) {
    this.sql = {
      get: db.prepare<[string, string], string>("SELECT record FROM schedules WHERE account = ? AND name = ?").pluck(),
      list: db.prepare<[string, string, number], string>(`SELECT record FROM schedules WHERE account = ? AND name > ? ORDER BY name ${boundLimit()}`).pluck(),
      insert: db.prepare<[string, string, number, number | null, string]>(
        "INSERT INTO schedules (account, name, version, next_run_at_ms, record) VALUES (?, ?, ?, ?, ?) ON CONFLICT (account, name) DO NOTHING",
      ),
      update: db.prepare<[number, number | null, string, string, string, number]>("UPDATE schedules SET version = ?, next_run_at_ms = ?, record = ? WHERE account = ? AND name = ? AND version = ?"),
      setRecord: db.prepare<[string, string, string]>("UPDATE schedules SET record = ? WHERE account = ? AND name = ?"),
      delete: db.prepare<[string, string]>("DELETE FROM schedules WHERE account = ? AND name = ?"),
      due: db.prepare<[number, number], string>(`SELECT record FROM schedules WHERE next_run_at_ms <= ? ORDER BY next_run_at_ms ${boundLimit()}`).pluck(),
      nextDue: db.prepare<[], number | null>("SELECT min(next_run_at_ms) FROM schedules").pluck(),
    };
  }

  async scheduleGet(p: { account?: string; name: string }): Promise<ScheduleRecord | undefined> {
    const json = this.sql.get.get(p.account ?? "", p.name);
    return json === undefined ? undefined : toSchedule(json);
  }

  async scheduleList(p: { account?: string; afterName?: string; limit: number }): Promise<ScheduleRecord[]> {
    return this.sql.list.all(p.account ?? "", p.afterName ?? "", p.limit).map(toSchedule);
  }

  async scheduleWrite(p: { schedule: ScheduleRecord; expectedVersion?: number }): Promise<ScheduleWriteResult> {
    return this.writes.run(() => this.writeNow(p.schedule, p.expectedVersion));
  }

  async scheduleDelete(p: { account?: string; name: string }): Promise<boolean> {
    return this.writes.run(() => this.sql.delete.run(p.account ?? "", p.name).changes > 0);
  }

  async scheduleListDue(p: { nowMs: number; limit: number }): Promise<ScheduleRecord[]> {
    return this.sql.due.all(p.nowMs, p.limit).map(toSchedule);
  }

  async scheduleNextDueAt(): Promise<number | undefined> {
    return this.sql.nextDue.get() ?? undefined;
  }

  async scheduleFire(p: { schedule: ScheduleRecord; expectedVersion: number; items: JobCreateItem[]; nowMs: number }): Promise<{ fired: false } | { fired: true; results: JobCreateResult[] }> {
    return this.writes.run(() => {
      if (!this.writeNow(p.schedule, p.expectedVersion).written) return { fired: false as const };
      // A failed create throws: the write's savepoint takes the schedule's update back with it.
      const results = this.createJobs(p.items, p.nowMs);
      const after = recordAfterFire(p.schedule, results);
      if (after) this.sql.setRecord.run(JSON.stringify(after), p.schedule.account ?? "", p.schedule.name);
      return { fired: true as const, results };
    });
  }

  private writeNow(schedule: ScheduleRecord, expectedVersion: number | undefined): ScheduleWriteResult {
    const [account, name, version, next, json] = scheduleValues(schedule);
    const changed =
      expectedVersion === undefined
        ? this.sql.insert.run(account, name, version, next, json).changes
        : this.sql.update.run(version, next, json, account, name, expectedVersion).changes;
    if (changed > 0) return { written: true };
    const current = this.sql.get.get(account, name);
    return current === undefined ? { written: false } : { written: false, current: toSchedule(current) };
  }
}
