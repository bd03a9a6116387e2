/**
 * The durable job event log (Store extends this). Every event of every job transition a store
 * applies (JobChange.events) is appended in the transaction that applies it, with an id from one
 * increasing sequence per database. Readers resume from an id they saw: GET /v1/events with
 * Last-Event-ID, after a disconnect or a restart, misses nothing and repeats nothing — which a
 * store must guarantee by making ids visible in order: once jobEventList has answered id N, no
 * event with an id below N may commit later (SQLite: one writer; PostgreSQL: take the ids under
 * a lock held to commit, or read only below the oldest open appender).
 */
import type { JobEventType, JobRecord } from "./job.js";

export interface LoggedJobEvent {
  id: number;
  type: JobEventType;
  atMs: number;
  jobId: string;
  queueName: string;
  /**
   * The job as it was at the event. Its input is the job's (it never changes); once the job is
   * pruned, `inputJson` is "null".
   */
  job: JobRecord;
}

export interface JobEventLog {
  /**
   * Events after `afterId` (and at most `throughId`), in id order, at most `limit`; only one
   * account's, one queue's or one job's when asked. `account` ("" for the server's own: the job's
   * JobRecord.account, absent there) is kept with each event; without it every account's events
   * are listed, and `queueName` then matches that name in any account.
   */
  jobEventList(p: { afterId: number; throughId?: number; limit: number; account?: string; queueName?: string; jobId?: string }): Promise<LoggedJobEvent[]>;
  /** `headId`: the latest id appended (0 when none); `floorId`: the latest id pruned (0 when none). */
  jobEventBounds(): Promise<{ headId: number; floorId: number }>;
  /** Deletes up to `limit` of the oldest events appended before `beforeAtMs`; answers how many. */
  jobEventPrune(p: { beforeAtMs: number; limit: number }): Promise<number>;
}

/**
 * A job as the log keeps it at an event: every field but its input (which never changes and may
 * be a MiB; readers take it from the job) and its lease token (a worker's secret) — so each event
 * costs its job's state, not its payload.
 */
export function eventSnapshotJson(job: JobRecord): string {
  const { inputJson: _input, leaseToken: _lease, ...state } = job;
  return JSON.stringify(state);
}

/** The job of a logged event: its snapshot, with the input read from the job (or "null" once pruned). */
export function jobOfSnapshot(snapshotJson: string, inputJson: string | undefined): JobRecord {
  const state = JSON.parse(snapshotJson) as Omit<JobRecord, "inputJson">;
  return { ...state, inputJson: inputJson ?? "null" };
}

/** The webhook-id of a delivery: `msg_` and its event's durable id, so a webhook and the SSE event it mirrors name each other. */
export function webhookIdOfEvent(eventId: number): string {
  return `msg_${eventId}`;
}
