/** The `schedules` table's rows, as both stores write and read them: core's record as JSON, its version and next run as columns. */
import type { ScheduleRecord } from "../../core/schedules/schedule.js";

/** A schedule's values for (account, name, version, next_run_at_ms, record), in that order. */
export function scheduleValues(s: ScheduleRecord): [string, string, number, number | null, string] {
  return [s.account ?? "", s.name, s.version, s.nextRunAtMs ?? null, JSON.stringify(s)];
}

export function toSchedule(record: string): ScheduleRecord {
  return JSON.parse(record) as ScheduleRecord;
}
