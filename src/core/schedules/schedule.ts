/**
 * A schedule: a cron expression or a fixed interval that submits one job to a queue per run.
 * Its record is what a store keeps; `version` changes with every write, so that creating a run's
 * jobs is a compare-and-set on it — one node wins each run, and a restart never repeats one.
 */
import type { StoredSubmitOptions } from "../jobs/job-validation.js";

/** What to do with runs missed while no server was running (more than limits.schedules.missedAfterMs late). */
export const catchUpModes = ["none", "latest", "all"] as const;
export type CatchUp = (typeof catchUpModes)[number];
export const defaultCatchUp: CatchUp = "latest";

/** The options every job of a schedule is submitted with: a submit's, without delay or dependencies. */
export type ScheduleJobOptions = StoredSubmitOptions;

/** `PUT /v1/schedules/{name}`'s body. Exactly one of `cron` and `everySeconds`. */
export interface ScheduleInput {
  queue: string;
  cron?: string;
  everySeconds?: number;
  /** IANA name; default UTC. Cron expressions are read in it (DST included). */
  timezone?: string;
  input: unknown;
  options?: ScheduleJobOptions;
  catchUp?: CatchUp;
}

export interface ScheduleRecord {
  /** Unique within its account (set only for an account other than the server's own, ""), whose queue its jobs go to. */
  account?: string;
  name: string;
  queueName: string;
  cron?: string;
  everySeconds?: number;
  timezone: string;
  /** The input of every job it submits, as JSON text. */
  inputJson: string;
  /** ScheduleJobOptions as JSON text (a store needn't know their structure). */
  optionsJson: string;
  catchUp: CatchUp;
  paused: boolean;
  /** The earliest run not created yet; undefined while paused, or when no run will ever come. */
  nextRunAtMs?: number;
  /** The latest run a job was created for, and that job (set by the store's scheduleFire: the job the run's key names). */
  lastRunAtMs?: number;
  lastJobId?: string;
  createdAtMs: number;
  updatedAtMs: number;
  /** 1 when created, + 1 on every write: the compare-and-set of a fire. */
  version: number;
}
