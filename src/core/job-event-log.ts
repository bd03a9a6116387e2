/**
 * The durable job event log (Store extends this). Every event of every job transition a store
 * applies (JobChange.events) is appended in the transaction that applies it, with an id from one
 * increasing sequence per database. Readers resume from an id they saw: GET /v1/events with
 * Last-Event-ID, after a disconnect or a restart, misses nothing and repeats nothing — which a
 * store must guarantee by making ids visible in order: once jobEventList has answered id N, no
 * event with an id below N may commit later (SQLite: one writer; PostgreSQL: take the ids under
 * a lock held to commit, or read only below the oldest open appender).
 */
import type { JobError, JobEventType, JobOutputBatch, JobRecord, JobStatus, JobTrace, JobWebhook, OnParentFailure } from "./job.js";

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
  /** A job.output event's chunks (outputBatchOf). */
  output?: JobOutputBatch;
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
 * A job as the log keeps it at an event: a JSON array of its fields by position (eventFields),
 * without those the event keeps in columns of its own — id, queue name, account, output (as
 * stored, so it is neither escaped into the snapshot nor parsed out of it) — nor its input (which
 * never changes and may be a MiB; readers take it from the job) nor its lease token (a worker's
 * secret). Fields usually absent come last and trailing nulls are left off: an event costs a few
 * dozen bytes beside its output, not its payload.
 */
export function eventSnapshotJson(job: JobRecord): string {
  const fields: unknown[] = [
    job.status,
    job.seq,
    job.queueId,
    job.attempt,
    job.maxAttempts,
    job.priority,
    job.createdAtMs,
    job.updatedAtMs,
    job.cancelRequested ? 1 : 0,
    job.startedAtMs ?? null,
    job.finishedAtMs ?? null,
    job.leaseSeconds ?? null,
    job.leaseExpiresAtMs ?? null,
    job.availableAtMs ?? null,
    job.expiresAtMs ?? null,
    job.messageSeq ?? null,
    job.deadlineAtMs ?? null,
    job.progress ?? null,
    job.error ?? null,
    job.timeoutSeconds ?? null,
    job.idempotencyKey ?? null,
    job.metadataJson ?? null,
    job.webhook ?? null,
    job.tenant ?? null,
    job.dependsOn ?? null,
    job.onParentFailure ?? null,
    job.trace ?? null,
    job.attachmentsJson ?? null,
    job.outputAttachmentsJson ?? null,
  ];
  let n = fields.length;
  while (fields[n - 1] === null) n--;
  fields.length = n;
  return JSON.stringify(fields);
}

/** What an event keeps beside its snapshot, in columns of its own. */
export interface EventColumns {
  jobId: string;
  queueName: string;
  /** "" for the server's own account. */
  account: string;
  /** The job's output at the event (JobRecord.outputJson), as stored; null without one. */
  outputJson: string | null;
}

/**
 * The job of a logged event: its snapshot and columns, with the input read from the job ("null"
 * once it is pruned). A snapshot written before migration 031 (SQLite) / 020 (PostgreSQL) is a
 * JSON object of the record itself, and reads as it was written.
 */
export function jobOfSnapshot(snapshotJson: string, columns: EventColumns, inputJson: string | undefined): JobRecord {
  if (snapshotJson.startsWith("{")) {
    const state = JSON.parse(snapshotJson) as Omit<JobRecord, "inputJson">;
    return { ...state, inputJson: inputJson ?? "null" };
  }
  const f = JSON.parse(snapshotJson) as unknown[];
  const at = <T>(i: number): T | undefined => (f[i] ?? undefined) as T | undefined;
  // Every field, in JobRecord's order (newJobRecord says why one shape matters).
  return {
    id: columns.jobId,
    seq: f[1] as number,
    queueId: f[2] as number,
    queueName: columns.queueName,
    account: columns.account === "" ? undefined : columns.account,
    status: f[0] as JobStatus,
    inputJson: inputJson ?? "null",
    outputJson: columns.outputJson ?? undefined,
    error: at<JobError>(18),
    attempt: f[3] as number,
    maxAttempts: f[4] as number,
    priority: f[5] as number,
    progress: at<number>(17),
    createdAtMs: f[6] as number,
    startedAtMs: at<number>(9),
    finishedAtMs: at<number>(10),
    updatedAtMs: f[7] as number,
    idempotencyKey: at<string>(20),
    metadataJson: at<string>(21),
    timeoutSeconds: at<number>(19),
    webhook: at<JobWebhook>(22),
    cancelRequested: f[8] === 1,
    leaseToken: undefined,
    leaseSeconds: at<number>(11),
    leaseExpiresAtMs: at<number>(12),
    deadlineAtMs: at<number>(16),
    availableAtMs: at<number>(13),
    expiresAtMs: at<number>(14),
    messageSeq: at<number>(15),
    tenant: at<string>(23),
    dependsOn: at<string[]>(24),
    onParentFailure: at<OnParentFailure>(25),
    trace: at<JobTrace>(26),
    attachmentsJson: at<string>(27),
    outputAttachmentsJson: at<string>(28),
  };
}

/**
 * How far a prune of the log goes, given its oldest events in id order: through the last of the
 * prefix appended before `beforeAtMs` (ids grow with time; a clock that stepped back only keeps a
 * few events longer), so the floor says exactly what is gone. Undefined: nothing to prune.
 */
export function prunedPrefix(oldest: ReadonlyArray<{ id: number; atMs: number }>, beforeAtMs: number): { throughId: number; count: number } | undefined {
  let count = 0;
  while (count < oldest.length && oldest[count]!.atMs < beforeAtMs) count++;
  return count === 0 ? undefined : { throughId: oldest[count - 1]!.id, count };
}

/** The webhook-id of a delivery: `msg_` and its event's durable id, so a webhook and the SSE event it mirrors name each other. */
export function webhookIdOfEvent(eventId: number): string {
  return `msg_${eventId}`;
}

/**
 * A job.output event keeps `[index,[chunks…]]` in its output column (the job's own output is not
 * kept with it: it has none while it runs), so the chunks are neither escaped nor parsed to store.
 */
export function outputColumnJson(index: number, chunksJson: string): string {
  return `[${index},${chunksJson}]`;
}

/** The batch a job.output event's output column holds (outputColumnJson), of the snapshot's attempt. */
export function outputBatchOf(column: string, attempt: number): JobOutputBatch {
  const comma = column.indexOf(",");
  return { attempt, index: Number(column.slice(1, comma)), chunksJson: column.slice(comma + 1, -1) };
}

/** A log row as both stores read it: the event, its job (jobOfSnapshot) and a job.output's batch. */
export function loggedEventOf(r: { id: number; atMs: number; type: string; snapshotJson: string; columns: EventColumns; inputJson: string | undefined }): LoggedJobEvent {
  const isOutput = r.type === "job.output";
  const job = jobOfSnapshot(r.snapshotJson, isOutput ? { ...r.columns, outputJson: null } : r.columns, r.inputJson);
  const event: LoggedJobEvent = { id: r.id, type: r.type as JobEventType, atMs: r.atMs, jobId: r.columns.jobId, queueName: r.columns.queueName, job };
  if (isOutput && r.columns.outputJson !== null) event.output = outputBatchOf(r.columns.outputJson, job.attempt);
  return event;
}
