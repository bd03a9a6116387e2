/** The prepared statements of the jobs half of the SQLite store (jobs-store.ts), prepared once per database. */
import type Database from "better-sqlite3";
import { boundLimit } from "./bound-limit.js";
import { jobColumns, mutableJobColumns } from "../codecs/job-row.js";
import type { ReadyMessageRow } from "../codecs/message-row.js";
import { jobSelectSql, jobUpdateSql } from "./job-rows.js";
import { KeptCounts } from "./kept-counts.js";
import { type MessageInserter, prepareMessageInsert } from "./message-insert.js";
import { prepareQueueExists } from "./queue-exists.js";
import { sentBeforeSql } from "./queue-counts.js";
import { visibleParts } from "./visible-order.js";
import { readyUngroupedQuery } from "./ready-order.js";
import { marks } from "./sized-statements.js";

const selectJob = jobSelectSql;

type Statement<Params extends unknown[] = unknown[], Result = unknown> = Database.Statement<Params, Result>;
type JobRowsRead = Statement<[number, number], { id: string; queue_name: string; account: string }>;

/** Spelled out, not inferred: the build's declarations can't name better-sqlite3's inner Statement type. */
export interface JobStatements {
  jobById: Statement<[string], unknown[]>;
  jobInsert: Statement;
  /** The input of a job with requires (job-rows.ts: jobInputSql). */
  jobInputInsert: Statement<[number, string]>;
  jobUpdate: Statement;
  /** The UPDATE of only the columns in `mask` (job-rows.ts: jobChangeOf), prepared once per mask. */
  jobUpdateOf(mask: number): Statement;
  listAll: Statement<[number, number, number], unknown[]>;
  listByStatus: Statement<[number, string, number, number], unknown[]>;
  countByStatus: Statement<[number], { status: string; n: number }>;
  leaseExpired: JobRowsRead;
  deadlinePassed: JobRowsRead;
  prune: Statement<[number, number, number]>;
  keyGet: Statement<[number, string], { fingerprint: string; job_id: string; expires_at_ms: number }>;
  keyPut: Statement;
  keysPrune: Statement<[number, number]>;
  settingsGet: Statement<[number], string>;
  liveJobsOfMessages: Statement<[{ queueId: number; before: number; limit: number }], unknown[]>;
  settingsPut: Statement;
  messageInsert: MessageInserter;
  anyVisible: Statement<number[], number>;
  ready: Statement<[number, number, number, number], ReadyMessageRow>;
  messageBody: Statement<[number], string>;
  /** Message deletes by seq, each queue's kept counts moved with them. */
  keptCounts: KeptCounts;
  messageVisibleAt: Statement<[number, number]>;
  messageLease: Statement<[number, number, string, number]>;
  messageDeadLetter: Statement<[number, number, string, number]>;
  /** As messageDeadLetter, the body put back from the job's input (what the dead-letter queue's readers read). */
  messageDeadLetterWithBody: Statement<[number, number, string, string, number]>;
  queueExists: (queueId: number) => boolean;
}

export function prepareJobStatements(db: Database.Database): JobStatements {
  const keptCounts = new KeptCounts(db);
  const updates = new Map<number, Statement>();
  return {
    jobUpdateOf(mask) {
      let statement = updates.get(mask);
      if (!statement) updates.set(mask, (statement = db.prepare(jobUpdateSql(mask))));
      return statement;
    },
    // Job rows are read as arrays and written with positional parameters (job-rows.ts says why).
    jobById: db.prepare<[string], unknown[]>(`SELECT ${selectJob} FROM jobs WHERE id = ?`).raw(),
    jobInsert: db.prepare(`INSERT INTO jobs (${jobColumns.join(", ")}) VALUES (${marks(jobColumns.length)})`),
    jobInputInsert: db.prepare<[number, string]>("INSERT INTO job_inputs (seq, input) VALUES (?, ?)"),
    jobUpdate: db.prepare(`UPDATE jobs SET ${mutableJobColumns.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`),
    listAll: db.prepare<[number, number, number], unknown[]>(`SELECT ${selectJob} FROM jobs WHERE queue_id = ? AND seq < ? ORDER BY seq DESC ${boundLimit()}`).raw(),
    listByStatus: db
      .prepare<[number, string, number, number], unknown[]>(`SELECT ${selectJob} FROM jobs WHERE queue_id = ? AND status = ? AND seq < ? ORDER BY seq DESC ${boundLimit()}`)
      .raw(),
    countByStatus: db.prepare<[number], { status: string; n: number }>("SELECT status, count(*) AS n FROM jobs WHERE queue_id = ? GROUP BY status"),
    leaseExpired: db.prepare<[number, number], { id: string; queue_name: string; account: string }>(
      `SELECT id, queue_name, account FROM jobs WHERE status = 'running' AND lease_expires_at_ms <= ? ORDER BY lease_expires_at_ms ${boundLimit()}`,
    ),
    deadlinePassed: db.prepare<[number, number], { id: string; queue_name: string; account: string }>(
      `SELECT id, queue_name, account FROM jobs WHERE status = 'running' AND deadline_at_ms IS NOT NULL AND deadline_at_ms <= ? ORDER BY deadline_at_ms ${boundLimit()}`,
    ),
    // A finished job is kept while a webhook about it is still being delivered, and while its
    // Idempotency-Key holds: a replay must find the job, not create a second one.
    prune: db.prepare<[number, number, number]>(
      `DELETE FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= ?
         AND NOT EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.job_id = jobs.id AND o.status = 'pending')
         AND NOT EXISTS (SELECT 1 FROM job_idempotency_keys k WHERE k.queue_id = jobs.queue_id AND k.key = jobs.idempotency_key AND k.job_id = jobs.id AND k.expires_at_ms > ?)
         AND NOT EXISTS (SELECT 1 FROM job_dependencies d JOIN jobs c ON c.id = d.child_id WHERE d.parent_id = jobs.id AND c.status IN ('waiting', 'queued', 'running'))
         ${boundLimit()})`,
    ),
    keyGet: db.prepare<[number, string], { fingerprint: string; job_id: string; expires_at_ms: number }>(
      "SELECT fingerprint, job_id, expires_at_ms FROM job_idempotency_keys WHERE queue_id = ? AND key = ?",
    ),
    keyPut: db.prepare(
      `INSERT INTO job_idempotency_keys (queue_id, key, fingerprint, job_id, expires_at_ms) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (queue_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, job_id = excluded.job_id, expires_at_ms = excluded.expires_at_ms`,
    ),
    keysPrune: db.prepare<[number, number]>(
      `DELETE FROM job_idempotency_keys WHERE (queue_id, key) IN
         (SELECT queue_id, key FROM job_idempotency_keys WHERE expires_at_ms <= ? ${boundLimit()})`,
    ),
    settingsGet: db.prepare<[number], string>("SELECT settings FROM job_queue_settings WHERE queue_id = ?").pluck(),
    // Live jobs of the queue's messages sent before a time (jobs.id is the message id, and indexed).
    liveJobsOfMessages: db
      .prepare<[{ queueId: number; before: number; limit: number }], unknown[]>(
        `SELECT ${selectJob} FROM jobs WHERE id IN (${sentBeforeSql("message_id")}) AND status IN ('waiting', 'queued', 'running')`,
      )
      .raw(),
    settingsPut: db.prepare(
      `INSERT INTO job_queue_settings (queue_id, settings, updated_at_ms) VALUES (?, ?, ?)
       ON CONFLICT (queue_id) DO UPDATE SET settings = excluded.settings, updated_at_ms = excluded.updated_at_ms`,
    ),
    // Job messages are not remembered: leases read them with the job (the `ready` SELECT below).
    messageInsert: prepareMessageInsert(db, keptCounts),
    // Whether anything of the queue is visible now: one index seek per part (jobLease's shortcut).
    // Parameters: queue id and now, once per visibility part (perPart).
    anyVisible: db
      .prepare<number[], number>(
        `${visibleParts.map((part) => `SELECT 1 FROM (SELECT 1 FROM ${part.from} WHERE queue_id = ? AND ${part.where} AND visible_at_ms <= ? LIMIT 1)`).join(" UNION ALL ")} LIMIT 1`,
      )
      .pluck(),
    // The same order as a plain receive (messages_ready_ungrouped); job messages have no group.
    // Without the body: a job message's body is its job's input, read with the job; only a
    // message adopted as a new job (sent through SQS) needs it, and reads it then.
    ready: db.prepare<[number, number, number, number], ReadyMessageRow>(readyUngroupedQuery("seq, message_id, priority, sent_at_ms, visible_at_ms")),
    messageBody: db.prepare<[number], string>("SELECT body FROM messages WHERE seq = ?").pluck(),
    keptCounts,
    messageVisibleAt: db.prepare<[number, number]>("UPDATE messages SET visible_at_ms = ? WHERE seq = ?"),
    messageLease: db.prepare<[number, number, string, number]>(
      `UPDATE messages SET visible_at_ms = ?, receive_count = receive_count + 1,
         first_received_at_ms = coalesce(first_received_at_ms, ?), receipt_token = ? WHERE seq = ?`,
    ),
    // As a receive's dead-lettering does (receive.ts): the source is remembered for redrive.
    messageDeadLetter: db.prepare<[number, number, string, number]>(
      `UPDATE messages SET queue_id = ?, visible_at_ms = ?, receive_count = 0, first_received_at_ms = NULL,
         receipt_token = NULL, dead_letter_source = ? WHERE seq = ?`,
    ),
    messageDeadLetterWithBody: db.prepare<[number, number, string, string, number]>(
      `UPDATE messages SET queue_id = ?, visible_at_ms = ?, receive_count = 0, first_received_at_ms = NULL,
         receipt_token = NULL, dead_letter_source = ?, body = CASE WHEN body_bytes IS NULL THEN body ELSE ? END, body_bytes = NULL WHERE seq = ?`,
    ),
    queueExists: prepareQueueExists(db),
  };
}
