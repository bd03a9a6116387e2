/**
 * What one job lifecycle event means for metrics and the autoscaling advisor: a new arrival in
 * the queue (a submit, or a retry queued again), the end of an attempt that ran (and how long it
 * ran), a first start (and how long the job waited), or an outcome. Read from the event's record
 * alone, so nothing per job is kept in memory.
 */
import type { JobEvent } from "../core/index.js";

export type JobOutcome = "submitted" | "succeeded" | "failed" | "canceled" | "retried";

export interface JobEventFacts {
  queue: string;
  /** The queue's account ("" is the server's own: JobRecord.account). */
  account: string;
  outcome?: JobOutcome;
  /** Work entered the queue: a submit or a retry. */
  arrival: boolean;
  /** An attempt that ran ended (worker report, failure or expiry): its run time. */
  runSeconds?: number;
  /** A first attempt started: how long since the submit (delaySeconds included). */
  queueWaitSeconds?: number;
}

export function jobEventFacts(event: JobEvent): JobEventFacts {
  const job = event.job;
  const facts: JobEventFacts = { queue: job.queueName, account: job.account ?? "", arrival: false };
  const ran = job.startedAtMs !== undefined ? Math.max(0, event.atMs - job.startedAtMs) / 1000 : undefined;
  switch (event.type) {
    case "job.queued":
      // A fresh submit has never been leased; a lease handed back (release) also says job.queued.
      if (job.leaseToken === undefined && job.attempt === 0) {
        facts.outcome = "submitted";
        facts.arrival = true;
      }
      break;
    case "job.retrying":
      facts.outcome = "retried";
      facts.arrival = true;
      // Reported with the record of what came after when a lease found the lease expired: no run time then.
      if (job.status === "queued") facts.runSeconds = ran;
      break;
    case "job.started":
      if (job.attempt === 1 && job.startedAtMs !== undefined) facts.queueWaitSeconds = Math.max(0, job.startedAtMs - job.createdAtMs) / 1000;
      break;
    case "job.succeeded":
      facts.outcome = "succeeded";
      facts.runSeconds = ran;
      break;
    case "job.failed":
      facts.outcome = "failed";
      // A job that failed without running now (its message expired while queued) has no run to time.
      if (job.error?.type !== "MessageExpired") facts.runSeconds = ran;
      break;
    case "job.canceled":
      facts.outcome = "canceled";
      break;
    default:
      break;
  }
  return facts;
}
