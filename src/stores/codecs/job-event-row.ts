/** A row of job_events with its job's input beside it (`input`: null once the job is pruned), as both stores read it, as core's LoggedJobEvent. */
import { type LoggedJobEvent, loggedEventOf } from "../../core/job-event-log.js";

export interface JobEventRow {
  id: number;
  at_ms: number;
  account: string;
  queue_name: string;
  job_id: string;
  type: string;
  job: string;
  output: string | null;
  input: string | null;
}

export function toJobEvent(row: JobEventRow): LoggedJobEvent {
  const columns = { jobId: row.job_id, queueName: row.queue_name, account: row.account, outputJson: row.output };
  return loggedEventOf({ id: row.id, atMs: row.at_ms, type: row.type, snapshotJson: row.job, columns, inputJson: row.input ?? undefined });
}
