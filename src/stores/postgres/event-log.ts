/**
 * The durable job event log in PostgreSQL (core: job-event-log.ts). Appends run in the job
 * transitions' transactions; their ids are taken under one transaction-level advisory lock,
 * held to commit, so ids commit in order and a reader resuming after id N misses nothing (a
 * sequence alone hands out ids that concurrent transactions commit out of order). The price:
 * transactions that append events commit one after another.
 */
import { type JobEventLog, type LoggedJobEvent, eventSnapshotJson, prunedPrefix } from "../../core/job-event-log.js";
import type { JobEventType, JobRecord } from "../../core/job.js";
import type { Db, Queryable } from "./db.js";
import { type JobEventRow, toJobEvent } from "../codecs/job-event-row.js";

/** pg_advisory_xact_lock's key for appending events (migrate.ts uses another). */
export const eventAppendLockKey = 0x511cee;

export interface EventToLog {
  job: JobRecord;
  events: readonly JobEventType[];
}

/** Inside a transaction: appends every change's events, in order, and answers their ids in that order. */
export async function appendEvents(tx: Queryable, changes: readonly EventToLog[], atMs: number): Promise<number[]> {
  const jobIds: string[] = [];
  const accounts: string[] = [];
  const queues: string[] = [];
  const types: string[] = [];
  const snapshots: string[] = [];
  const outputs: Array<string | null> = [];
  for (const { job, events } of changes) {
    if (events.length === 0) continue;
    const snapshot = eventSnapshotJson(job);
    for (const type of events) {
      jobIds.push(job.id);
      accounts.push(job.account ?? "");
      queues.push(job.queueName);
      types.push(type);
      snapshots.push(snapshot);
      outputs.push(job.outputJson ?? null);
    }
  }
  if (types.length === 0) return [];
  await tx.query("SELECT pg_advisory_xact_lock($1)", [eventAppendLockKey]);
  const { rows } = await tx.query<{ id: number }>(
    `INSERT INTO job_events (at_ms, queue_name, job_id, type, job, account, output)
     SELECT $1, t.queue_name, t.job_id, t.type, t.job, t.account, t.output
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS t (queue_name, job_id, type, job, account, output, ord)
     ORDER BY t.ord RETURNING id`,
    [atMs, queues, jobIds, types, snapshots, accounts, outputs],
  );
  return rows.map((r) => r.id);
}

export class PostgresEventLog implements JobEventLog {
  constructor(private readonly db: Db) {}

  async jobEventList(p: { afterId: number; throughId?: number; limit: number; account?: string; queueName?: string; jobId?: string }): Promise<LoggedJobEvent[]> {
    const { rows } = await this.db.query<JobEventRow>(
      `SELECT e.id, e.at_ms, e.queue_name, e.job_id, e.type, e.job, e.account, e.output, j.input FROM job_events e LEFT JOIN jobs j ON j.id = e.job_id
       WHERE e.id > $1 AND e.id <= $2 AND ($3::text IS NULL OR e.queue_name = $3) AND ($4::text IS NULL OR e.job_id = $4) AND ($6::text IS NULL OR e.account = $6)
       ORDER BY e.id LIMIT $5`,
      [p.afterId, p.throughId ?? Number.MAX_SAFE_INTEGER, p.queueName ?? null, p.jobId ?? null, p.limit, p.account ?? null],
    );
    return rows.map(toJobEvent);
  }

  async jobEventBounds(): Promise<{ headId: number; floorId: number }> {
    const { rows } = await this.db.query<{ head: number | null; floor: number }>(
      "SELECT (SELECT max(id) FROM job_events) AS head, (SELECT pruned_through_id FROM job_event_floor) AS floor",
    );
    const { head, floor } = rows[0]!;
    return { headId: Math.max(head ?? 0, floor), floorId: floor };
  }

  async jobEventPrune(p: { beforeAtMs: number; limit: number }): Promise<number> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ id: number; atMs: number }>('SELECT id, at_ms AS "atMs" FROM job_events ORDER BY id LIMIT $1', [p.limit]);
      const pruned = prunedPrefix(rows, p.beforeAtMs);
      if (!pruned) return 0;
      await tx.query("DELETE FROM job_events WHERE id <= $1", [pruned.throughId]);
      await tx.query("UPDATE job_event_floor SET pruned_through_id = greatest(pruned_through_id, $1)", [pruned.throughId]);
      return pruned.count;
    });
  }
}
