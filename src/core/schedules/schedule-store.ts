/**
 * The store methods behind schedules (Store extends this). Plain data in and out, one atomic
 * operation each. Every write is a compare-and-set on the record's `version`: core reads, decides
 * (run times, catchUp, pause), and writes back only if nobody wrote in between — so with many
 * nodes on one database each run is created by exactly one of them (a PostgreSQL store:
 * `UPDATE … WHERE name = $1 AND version = $2`), and a restart can't create a run twice.
 */
import type { JobCreateItem, JobCreateResult } from "../job-store.js";
import type { ScheduleRecord } from "./schedule.js";

export type ScheduleWriteResult = { written: true } | { written: false; current?: ScheduleRecord };

/**
 * A schedule's name is unique within its account (ScheduleRecord.account); every `account` below
 * defaults to "", the server's own, and a write's account is its record's.
 */
export interface ScheduleStore {
  scheduleGet(p: { account?: string; name: string }): Promise<ScheduleRecord | undefined>;
  /** The account's, by name, after `afterName` when paging. */
  scheduleList(p: { account?: string; afterName?: string; limit: number }): Promise<ScheduleRecord[]>;
  /**
   * Writes `schedule` whole. `expectedVersion` undefined: creates it, refused if the name exists in its account;
   * otherwise replaces it only while the stored version is `expectedVersion`. A refusal writes
   * nothing and answers the stored record (absent if there is none).
   */
  scheduleWrite(p: { schedule: ScheduleRecord; expectedVersion?: number }): Promise<ScheduleWriteResult>;
  /** True if it existed. Jobs it created stay. */
  scheduleDelete(p: { account?: string; name: string }): Promise<boolean>;
  /** Schedules of every account whose nextRunAtMs ≤ nowMs (paused ones have none), earliest first. */
  scheduleListDue(p: { nowMs: number; limit: number }): Promise<ScheduleRecord[]>;
  /** The earliest nextRunAtMs of any schedule, or undefined. */
  scheduleNextDueAt(): Promise<number | undefined>;
  /**
   * A run: in ONE transaction, replaces the schedule as scheduleWrite would (refused unless the
   * stored version is `expectedVersion`) and creates `items` as jobCreateMany would (their
   * Idempotency-Keys derived from schedule and run time). The stored record's `lastJobId` is the
   * last item's job — the one created, or the one its key already named (none: as given).
   * Refused: nothing is written.
   */
  scheduleFire(p: { schedule: ScheduleRecord; expectedVersion: number; items: JobCreateItem[]; nowMs: number }): Promise<{ fired: false } | { fired: true; results: JobCreateResult[] }>;
}

/**
 * The record a fire stores once its jobs are created: with `lastJobId` the last item's job (the one
 * created, or the one its key already named). Undefined: the written record says so already.
 */
export function recordAfterFire(schedule: ScheduleRecord, results: readonly JobCreateResult[]): ScheduleRecord | undefined {
  const lastJobId = results.at(-1)?.job.id;
  return lastJobId === undefined || lastJobId === schedule.lastJobId ? undefined : { ...schedule, lastJobId };
}
