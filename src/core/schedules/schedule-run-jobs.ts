/** A schedule's runs as the jobs layer's keyed submits: one job per run, keyed by schedule and run time. */
import type { JobService } from "../jobs/job-service.js";
import { scheduleRunKey } from "./due-runs.js";
import type { ScheduleRunJobs } from "./schedule-service.js";

export function scheduleRunJobs(jobs: Pick<JobService, "keyedItems" | "announceCreated">): ScheduleRunJobs {
  return {
    itemsFor: (schedule, runs, nowMs) =>
      jobs.keyedItems({
        account: schedule.account ?? "",
        queueName: schedule.queueName,
        optionsJson: schedule.optionsJson,
        inputJson: schedule.inputJson,
        keys: runs.map((runAtMs) => scheduleRunKey(schedule.name, runAtMs)),
        nowMs,
      }),
    created: (results) => jobs.announceCreated(results),
  };
}
