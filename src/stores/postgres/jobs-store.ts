/**
 * The jobs half of the PostgreSQL store. A job's row and its message change in one transaction;
 * decisions are core's (transitions.ts): this file locks and reads, calls them, and applies their
 * result — job rows, message effects and webhook outbox rows, each kind in one statement.
 * Across nodes: a lease takes messages with SKIP LOCKED and their jobs with SKIP LOCKED (a job
 * another node is changing is passed by, never waited for), every other transition locks its job
 * row first, and idempotency keys are claimed by a primary key.
 */
import { SluiceError, fail } from "../../core/errors.js";
import { type JobQueueSettings, defaultJobQueueSettings } from "../../core/job-settings.js";
import type {
  IdempotencyClaim,
  JobAction,
  JobActionResult,
  JobChange,
  JobCreateItem,
  JobCreateManyResult,
  JobCreateResult,
  JobHandoff,
  JobLeaseParams,
  JobLeaseResult,
  JobOutputStore,
  JobStore,
  NewJob,
  WebhookOutboxStore,
} from "../../core/job-store.js";
import { type JobRecord, type JobStatus, type LeasedJob, isTerminal, newJobRecord } from "../../core/job.js";
import { childOnSubmit, submitWrite } from "../../core/jobs/dependencies.js";
import { type JobTransition, actionTransition, leaseTransition, messageLostTransition, retryTransition, webhookDeliveriesOf } from "../../core/jobs/transitions.js";
import type { NewMessage } from "../../core/message.js";
import type { Db, Queryable } from "./db.js";
import { type JobRow, adoptedJobOf, jobCountsOf, toExpiredJob, toJob } from "../codecs/job-row.js";
import { type JobVersionRow, jobInsertNewStatement, jobInsertStatement, jobInsertValues, jobUpdateStatement, jobUpdateValues } from "./job-rows.js";
import { holdTenantGroups, queueHasGroups } from "./fair-flows.js";
import { insertMessages } from "./message-insert.js";
import { mergeClassHeads, servableClassesOf, setRequirementClass } from "./requirement-classes.js";
import { queueMustExist, readyOrder } from "./rows.js";
import { hasLeaseLimits } from "../../core/lease-limits.js";
import { leaseLimited, lockLimitedLeases } from "./limited-lease.js";
import type { ReadyMessageRow } from "../codecs/message-row.js";
import { type EventToLog, appendEvents } from "./event-log.js";
import { addDependencies, childrenReleased, lockParentsOf, readParents } from "./job-dependencies.js";

import { outboxInsert } from "./webhook-outbox.js";

/** JobStore but streamed outputs (job-outputs.ts) and the outbox's calls (webhook-outbox.ts). */
export class PostgresJobStore implements Omit<JobStore, keyof JobOutputStore | keyof WebhookOutboxStore> {
  constructor(private readonly db: Db) {}

  /**
   * The items' jobs and messages in one transaction; then, when one was created, the handoff
   * lease in the same transaction, in a savepoint of its own (a failing handoff is undone alone).
   */
  async jobCreateMany(p: { items: JobCreateItem[]; nowMs: number; handoff?: JobHandoff }): Promise<JobCreateManyResult> {
    return queueMustExist(p.items[0]?.job.queueName ?? "", () =>
      this.db.transaction(async (tx): Promise<JobCreateManyResult> => {
        // A limited handoff's queue lock before anything else (limited-lease.ts: lock order).
        if (p.handoff) await lockLimitedLeases(tx, p.handoff);
        const results = await createJobsInTx(tx, p.items, p.nowMs);
        if (!p.handoff || !results.some((r) => r.created)) return { results };
        await tx.query("SAVEPOINT handoff");
        const r: JobLeaseResult = { leased: [], changes: [], acks: [] };
        try {
          await leaseReady(tx, p.handoff, r);
        } catch {
          await tx.query("ROLLBACK TO SAVEPOINT handoff");
          return { results };
        }
        await tx.query("RELEASE SAVEPOINT handoff");
        return { results, handoff: r };
      }),
    );
  }

  async jobGet(p: { id: string }): Promise<JobRecord | undefined> {
    const { rows } = await this.db.query<JobRow>("SELECT * FROM jobs WHERE id = $1", [p.id]);
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  async jobList(p: { queueId: number; status?: JobStatus; beforeSeq?: number; limit: number }): Promise<JobRecord[]> {
    const { rows } = await this.db.query<JobRow>(
      "SELECT * FROM jobs WHERE queue_id = $1 AND ($2::text IS NULL OR status = $2) AND seq < $3 ORDER BY seq DESC LIMIT $4",
      [p.queueId, p.status ?? null, p.beforeSeq ?? Number.MAX_SAFE_INTEGER, p.limit],
    );
    return rows.map(toJob);
  }

  async jobCountByStatus(p: { queueId: number }): Promise<Record<JobStatus, number>> {
    const { rows } = await this.db.query<{ status: JobStatus; n: number }>("SELECT status, count(*) AS n FROM jobs WHERE queue_id = $1 GROUP BY status", [p.queueId]);
    return jobCountsOf(rows);
  }

  /** Acks first, then ready messages in receive order, all in one transaction (at `nowMs`). */
  async jobLease(p: JobLeaseParams): Promise<JobLeaseResult> {
    const reports = (p.acks?.length ?? 0) > 0;
    // A long poll's first try usually finds nothing: one cheap probe, no transaction. It also says
    // whether the queue has tenants (a lease that just missed the first one serves it next time).
    let tenants: boolean | undefined;
    if (!reports) {
      const { rows } = await this.db.query<{ ready: boolean; tenants: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM messages WHERE queue_id = $1 AND visible_at_ms <= $2) AS ready,
                EXISTS (SELECT 1 FROM message_groups WHERE queue_id = $1 AND group_id > '') AS tenants`,
        [p.queueId, p.nowMs],
      );
      if (!rows[0]!.ready) return { leased: [], changes: [], acks: [] };
      tenants = rows[0]!.tenants;
    }
    // A lease that throws after the acks: its transaction goes, and the acks with it.
    let leaseFailed: { error: unknown } | undefined;
    try {
      return await this.db.transaction(async (tx) => {
        leaseFailed = undefined;
        // The queue's lease lock before the acks' row locks (limited-lease.ts: lock order).
        if (p.max > 0) await lockLimitedLeases(tx, p);
        const acks: JobActionResult[] = [];
        for (const ack of p.acks ?? []) acks.push(await applyAction(tx, ack, p.nowMs));
        const r: JobLeaseResult = { leased: [], changes: [], acks };
        if (p.max > 0) {
          try {
            await leaseReady(tx, p, r, tenants);
          } catch (error) {
            leaseFailed = { error };
            throw error;
          }
        }
        return r;
      });
    } catch (err) {
      if (leaseFailed === undefined || !reports) throw err;
      // The contract keeps the acks of a failed lease: applied again on their own (each job read
      // anew, as jobTransitionMany does), with no savepoint on the path of every lease that works.
      await this.jobTransitionMany({ nowMs: p.nowMs, actions: p.acks ?? [] });
      throw leaseFailed.error;
    }
  }

  /** The actions in order, in one transaction: each job locked, then changed (or the action refused, nothing written). */
  jobTransitionMany(p: { nowMs: number; actions: JobAction[] }): Promise<JobActionResult[]> {
    return this.db.transaction(async (tx) => {
      const results: JobActionResult[] = [];
      for (const action of p.actions) results.push(await applyAction(tx, action, p.nowMs));
      return results;
    });
  }

  async jobRetry(p: { id: string; nowMs: number; message: NewMessage }): Promise<JobChange> {
    return this.db.transaction(async (tx): Promise<JobChange> => {
      const job = await lockJob(tx, p.id);
      if (!job) fail("JobNotFound", `Job ${p.id} does not exist.`);
      const change = retryTransition(job, p);
      // The old message (in the dead-letter queue, if it is still anywhere) would run the job a second time.
      if (job.messageSeq !== undefined) await tx.query("DELETE FROM messages WHERE seq = $1", [job.messageSeq]);
      const [messageSeq] = await insertMessages(tx, job.queueId, [p.message]);
      if (job.requires !== undefined) await setRequirementClass(tx, messageSeq!, job.requires);
      const retried: JobRecord = { ...change.job, messageSeq };
      const { rows } = await tx.query<JobVersionRow>(jobUpdateStatement, jobUpdateValues([retried]));
      const retriedChange: JobChange = { job: retried, events: change.events, version: rows[0]?.version };
      await logEvents(tx, [retriedChange], p.nowMs);
      return retriedChange;
    });
  }

  async jobListExpired(p: { nowMs: number; limit: number }): Promise<Array<{ id: string; queueName: string; account?: string }>> {
    const { rows } = await this.db.query<{ id: string; queue_name: string; account: string }>(
      `(SELECT id, queue_name, account FROM jobs WHERE status = 'running' AND deadline_at_ms IS NOT NULL AND deadline_at_ms <= $1 ORDER BY deadline_at_ms LIMIT $2)
       UNION
       (SELECT id, queue_name, account FROM jobs WHERE status = 'running' AND lease_expires_at_ms <= $1 ORDER BY lease_expires_at_ms LIMIT $2)`,
      [p.nowMs, p.limit],
    );
    return rows.slice(0, p.limit).map(toExpiredJob);
  }

  async jobPrune(p: { nowMs: number; limit: number }): Promise<{ jobs: number; idempotencyKeys: number }> {
    return this.db.transaction(async (tx) => {
      // A finished job is kept while a webhook about it is still being delivered, and while its
      // Idempotency-Key holds: a replay must find the job, not create a second one.
      const { rows } = await tx.query<{ id: string }>(
        `DELETE FROM jobs WHERE seq IN (
           SELECT seq FROM jobs WHERE expires_at_ms IS NOT NULL AND expires_at_ms <= $1
             AND NOT EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.job_id = jobs.id AND o.status = 'pending')
             AND NOT EXISTS (SELECT 1 FROM job_idempotency_keys k WHERE k.queue_id = jobs.queue_id AND k.key = jobs.idempotency_key AND k.job_id = jobs.id AND k.expires_at_ms > $1)
             AND NOT EXISTS (SELECT 1 FROM job_dependencies d JOIN jobs c ON c.id = d.child_id WHERE d.parent_id = jobs.id AND c.status IN ('waiting', 'queued', 'running'))
           LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [p.nowMs, p.limit],
      );
      // Their finished deliveries go with them; pending ones stay to be delivered.
      if (rows.length > 0) await tx.query("DELETE FROM webhook_outbox WHERE status <> 'pending' AND job_id = ANY ($1::text[])", [rows.map((r) => r.id)]);
      const keys = await tx.query(
        `DELETE FROM job_idempotency_keys WHERE (queue_id, key) IN
           (SELECT queue_id, key FROM job_idempotency_keys WHERE expires_at_ms <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [p.nowMs, p.limit],
      );
      return { jobs: rows.length, idempotencyKeys: keys.rowCount ?? 0 };
    });
  }

  async jobQueueSettingsGet(p: { queueId: number }): Promise<JobQueueSettings | undefined> {
    return settingsOf(this.db, p.queueId);
  }

  async jobQueueSettingsPut(p: { queueId: number; settings: JobQueueSettings; nowMs: number }): Promise<void> {
    await queueMustExist(`#${p.queueId}`, () =>
      this.db.query(
        `INSERT INTO job_queue_settings (queue_id, settings, updated_at_ms) VALUES ($1, $2, $3)
         ON CONFLICT (queue_id) DO UPDATE SET settings = excluded.settings, updated_at_ms = excluded.updated_at_ms`,
        [p.queueId, JSON.stringify(p.settings), p.nowMs],
      ),
    );
  }

  /**
   * Inside the caller's transaction, just before it deletes the queue's messages sent before
   * `beforeSentAtMs` (a purge), or those of `seqs` (a retention slice): their live jobs end
   * (messageLostTransition).
   */
  async endJobsOfMessages(
    tx: Queryable,
    p: { queueId: number; beforeSentAtMs?: number; seqs?: number[]; nowMs: number; reason: "expired" | "purged" },
  ): Promise<JobChange[]> {
    const { rows } = await tx.query<JobRow>(
      `SELECT * FROM jobs WHERE id IN (
         SELECT message_id FROM messages WHERE queue_id = $1 AND ($2::bigint IS NULL OR sent_at_ms < $2) AND ($3::bigint[] IS NULL OR seq = ANY ($3::bigint[]))
       ) AND status IN ('waiting', 'queued', 'running')
       ORDER BY id FOR UPDATE`,
      [p.queueId, p.beforeSentAtMs ?? null, p.seqs ?? null],
    );
    if (rows.length === 0) return [];
    const resultTtlSeconds = ((await settingsOf(tx, p.queueId)) ?? defaultJobQueueSettings).resultTtlSeconds;
    const transitions = rows.map((row) => messageLostTransition(toJob(row), { nowMs: p.nowMs, resultTtlSeconds, reason: p.reason }));
    return applyTransitions(tx, transitions, p.nowMs);
  }


}

async function settingsOf(q: Queryable, queueId: number): Promise<JobQueueSettings | undefined> {
  const { rows } = await q.query<{ settings: string }>("SELECT settings FROM job_queue_settings WHERE queue_id = $1", [queueId]);
  return rows[0] ? (JSON.parse(rows[0].settings) as JobQueueSettings) : undefined;
}

async function lockJob(tx: Queryable, id: string): Promise<JobRecord | undefined> {
  const { rows } = await tx.query<JobRow>("SELECT * FROM jobs WHERE id = $1 FOR UPDATE", [id]);
  return rows[0] ? toJob(rows[0]) : undefined;
}

/** jobCreateMany's items inside a caller's transaction (a schedule's fire), in order. */
export async function createJobsInTx(tx: Queryable, items: readonly JobCreateItem[], nowMs: number): Promise<JobCreateResult[]> {
  // Row locks before any event is appended (the log's lock is held to commit: job-dependencies.ts):
  // the parents named, and the tenants' group rows (made if new).
  await lockParentsOf(tx, items);
  const tenantsByQueue = new Map<number, string[]>();
  for (const { job } of items) if (job.tenant !== undefined) tenantsByQueue.set(job.queueId, [...(tenantsByQueue.get(job.queueId) ?? []), job.tenant]);
  for (const [queueId, tenants] of [...tenantsByQueue].sort((x, y) => x[0] - y[0])) await holdTenantGroups(tx, queueId, tenants);
  const results: JobCreateResult[] = [];
  for (const item of items) results.push(await createOne(tx, item, nowMs));
  return results;
}

/**
 * One item: its key claimed (or the job it names answered), its rows inserted. A child (dependsOn)
 * is judged by its parents as they are now (lockParentsOf locked them): waiting with its message
 * invisible, queued, or ended already without a message.
 */
async function createOne(tx: Queryable, item: JobCreateItem, nowMs: number): Promise<JobCreateResult> {
  if (item.idempotency) {
    const existing = await claimKey(tx, item.job, item.idempotency, nowMs);
    if (existing) return existing;
  }
  let child: ReturnType<typeof childOnSubmit> | undefined;
  if (item.job.dependsOn !== undefined) {
    const parents = await readParents(tx, item.job.dependsOn);
    child = childOnSubmit(item.job, (id) => parents.get(id), nowMs, ((await settingsOf(tx, item.job.queueId)) ?? defaultJobQueueSettings).resultTtlSeconds);
  }
  const { job: newJob, events, message, parentIds } = submitWrite(item, child);
  let messageSeq: number | undefined;
  if (message) {
    [messageSeq] = await insertMessages(tx, newJob.queueId, [message]);
    if (newJob.requires !== undefined) await setRequirementClass(tx, messageSeq!, newJob.requires);
  }
  const job = newJobRecord(newJob, 0, messageSeq);
  const { rows } = await tx.query<{ seq: number }>(jobInsertStatement, jobInsertValues([job]));
  job.seq = rows[0]!.seq;
  if (parentIds) await addDependencies(tx, job.id, parentIds);
  await logEvents(tx, [{ job, events }], nowMs);
  return { created: true, job };
}

/**
 * Claims the key for this job, or returns the job a live claim names. The key row is locked
 * before its job is looked up (in a later statement), so a claim whose job is being created by
 * another node is seen with its job, never taken as free.
 */
async function claimKey(tx: Queryable, job: NewJob, claim: IdempotencyClaim, nowMs: number): Promise<JobCreateResult | undefined> {
  const inserted = await tx.query(
    `INSERT INTO job_idempotency_keys (queue_id, key, fingerprint, job_id, expires_at_ms) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (queue_id, key) DO NOTHING`,
    [job.queueId, claim.key, claim.fingerprint, job.id, claim.expiresAtMs],
  );
  if ((inserted.rowCount ?? 0) > 0) return undefined;
  const { rows } = await tx.query<{ fingerprint: string; job_id: string; expires_at_ms: number }>(
    "SELECT fingerprint, job_id, expires_at_ms FROM job_idempotency_keys WHERE queue_id = $1 AND key = $2 FOR UPDATE",
    [job.queueId, claim.key],
  );
  const existing = rows[0]!;
  if (existing.expires_at_ms > nowMs) {
    const { rows: jobs } = await tx.query<JobRow>("SELECT * FROM jobs WHERE id = $1", [existing.job_id]);
    if (jobs[0]) return { created: false, job: toJob(jobs[0]), fingerprint: existing.fingerprint };
  }
  // An expired claim is free again, and so is one whose job is gone (its queue was purged, say).
  await tx.query("UPDATE job_idempotency_keys SET fingerprint = $3, job_id = $4, expires_at_ms = $5 WHERE queue_id = $1 AND key = $2", [
    job.queueId,
    claim.key,
    claim.fingerprint,
    job.id,
    claim.expiresAtMs,
  ]);
  return undefined;
}

/**
 * One action by id (an ack of a lease, or jobTransitionMany's) inside the caller's transaction;
 * a refusal (thrown by the transition, before any write) is its result. Two nodes' sweeps that
 * find the same expired job: the second re-checks the locked row and changes nothing.
 */
async function applyAction(tx: Queryable, action: JobAction, nowMs: number): Promise<JobActionResult> {
  try {
    const job = await lockJob(tx, action.id);
    if (!job) fail("JobNotFound", `Job ${action.id} does not exist.`);
    return { ok: true, change: (await applyTransitions(tx, [actionTransition(job, action, nowMs)], nowMs))[0]! };
  } catch (err) {
    if (err instanceof SluiceError) return { ok: false, error: { code: err.code, message: err.message } };
    throw err;
  }
}

/**
 * Leases ready jobs into `r`, up to `p.max`: on a queue with limits or tenants as limited-lease.ts
 * says, otherwise in receive order. `tenants`: whether the queue has any, if already known.
 */
async function leaseReady(tx: Queryable, p: JobLeaseParams, r: JobLeaseResult, tenants?: boolean): Promise<void> {
  const hasTenants = tenants ?? (await queueHasGroups(tx, p.queueId));
  // The requirement classes this worker's labels serve, besides jobs that require nothing.
  const classes = await servableClassesOf(tx, p);
  if (!hasTenants && !hasLeaseLimits(p.limits)) return leasePlain(tx, p, r, classes);
  return leaseLimited(
    tx,
    p,
    r,
    hasTenants,
    (bounded, into) => leasePlain(tx, bounded, into, classes),
    (rows, into) => leaseRows(tx, rows, p, into),
    classes.length === 0 ? undefined : { keys: classes, mergeHeads: (rows, wanted) => mergeClassHeads(tx, p, classes, rows, wanted) },
  );
}

/** Ungrouped ready jobs in receive order into `r`, up to `p.max`: those requiring nothing and those of `classes`. */
async function leasePlain(tx: Queryable, p: JobLeaseParams, r: JobLeaseResult, classes: readonly string[]): Promise<void> {
  // Every message taken leaves the ready set (leased, deleted or hidden), so this ends.
  while (r.leased.length < p.max) {
    const wanted = p.max - r.leased.length;
    const { rows } = await tx.query<ReadyMessageRow>(
      `SELECT seq, message_id, priority, sent_at_ms, visible_at_ms FROM messages
       WHERE queue_id = $1 AND group_id IS NULL AND req_class IS NULL AND visible_at_ms <= $2 AND sent_at_ms >= $3
       ORDER BY ${readyOrder} LIMIT $4 FOR UPDATE SKIP LOCKED`,
      [p.queueId, p.nowMs, p.minSentAtMs, wanted],
    );
    if (classes.length > 0) await mergeClassHeads(tx, p, classes, rows, wanted);
    if (rows.length === 0) return;
    const { passedBy } = await leaseRows(tx, rows, p, r);
    if (rows.length < wanted || passedBy === rows.length) return;
  }
}

/**
 * Leases ready messages (locked by the caller), in order, into `r`: each one's job is locked
 * (SKIP LOCKED) and leased, or its stale message deleted or hidden again. Answers the seqs that
 * started a job, and how many rows were passed by untouched (their job changing on another node).
 */
async function leaseRows(tx: Queryable, rows: ReadyMessageRow[], p: JobLeaseParams, r: JobLeaseResult): Promise<{ started: Set<number>; passedBy: number }> {
  const started = new Set<number>();
  if (rows.length === 0) return { started, passedBy: 0 };
  const jobs = await jobsForMessages(tx, rows, p);
  const transitions: JobTransition[] = [];
  const skipped: Array<{ seq: number; effect: JobTransition["message"] }> = [];
  for (const row of rows) {
    const job = jobs.get(row.message_id);
    if (!job) continue; // changing on another node right now: left for the next lease
    const t = leaseTransition(job, p, row.seq);
    if ("skip" in t) skipped.push({ seq: row.seq, effect: t.message });
    else transitions.push(t);
  }
  for (const s of skipped) {
    if (s.effect.kind === "delete") await tx.query("DELETE FROM messages WHERE seq = $1", [s.seq]);
    // A waiting job's message made visible from outside (SQS): hidden again.
    else if (s.effect.kind === "visibleAt") await tx.query("UPDATE messages SET visible_at_ms = $2 WHERE seq = $1", [s.seq, s.effect.visibleAtMs]);
  }
  const seqOf = new Map(rows.map((row) => [row.message_id, row.seq]));
  for (const change of await applyTransitions(tx, transitions, p.nowMs)) {
    r.changes.push(change);
    if (change.job.status === "running") {
      r.leased.push(change.job as LeasedJob);
      started.add(seqOf.get(change.job.id)!);
    }
  }
  return { started, passedBy: rows.length - jobs.size };
}

/**
 * The messages' jobs, locked (SKIP LOCKED: one another node is changing is left out); a message
 * without a job (sent through SQS, or its job pruned) is adopted as a new job.
 */
async function jobsForMessages(tx: Queryable, rows: ReadyMessageRow[], p: JobLeaseParams): Promise<Map<string, JobRecord>> {
  const ids = rows.map((r) => r.message_id);
  const { rows: found } = await tx.query<JobRow>("SELECT * FROM jobs WHERE id = ANY ($1::text[]) FOR UPDATE SKIP LOCKED", [ids]);
  const jobs = new Map(found.map((row) => [row.id, toJob(row)]));
  const orphans = rows.filter((r) => !jobs.has(r.message_id));
  if (orphans.length === 0) return jobs;
  // Those with no row at all (not merely locked) are adopted.
  const { rows: existing } = await tx.query<{ id: string }>("SELECT id FROM jobs WHERE id = ANY ($1::text[])", [orphans.map((o) => o.message_id)]);
  const locked = new Set(existing.map((e) => e.id));
  const adopt = orphans.filter((o) => !locked.has(o.message_id));
  if (adopt.length === 0) return jobs;
  const { rows: bodies } = await tx.query<{ seq: number; body: string }>("SELECT seq, body FROM messages WHERE seq = ANY ($1::bigint[])", [adopt.map((a) => a.seq)]);
  const bodyOf = new Map(bodies.map((b) => [b.seq, b.body]));
  const adopted = adopt.map((row) => adoptedJobOf(row, bodyOf.get(row.seq)!, p));
  // ON CONFLICT: another node adopting the same message at once; only one row is made.
  const { rows: seqs } = await tx.query<{ seq: number; id: string }>(jobInsertNewStatement, jobInsertValues(adopted));
  const made = new Map(seqs.map((s) => [s.id, s.seq]));
  for (const job of adopted) {
    const seq = made.get(job.id);
    if (seq !== undefined) jobs.set(job.id, { ...job, seq });
  }
  return jobs;
}

/**
 * Applies transitions: job rows (one UPDATE), message effects (one statement per kind), then the
 * waiting children the ended jobs release (dependsOn: their JobChange.followOn, in turn), then the
 * events of all of them and their webhook outbox rows (one INSERT each). Returns each one's change, in order.
 */
async function applyTransitions(tx: Queryable, decided: JobTransition[], nowMs: number): Promise<JobChange[]> {
  if (decided.length === 0) return [];
  const ttls = new Map<number, number>();
  const resultTtlOf = async (queueId: number): Promise<number> => {
    let ttl = ttls.get(queueId);
    if (ttl === undefined) ttls.set(queueId, (ttl = ((await settingsOf(tx, queueId)) ?? defaultJobQueueSettings).resultTtlSeconds));
    return ttl;
  };
  const { changes, parents } = await writeTransitions(tx, decided, nowMs);
  const logged = [...changes];
  for (let ended = parents; ended.length > 0; ) {
    const released = await childrenReleased(tx, ended.map((c) => c.job), nowMs, resultTtlOf);
    if (released.length === 0) break;
    const next = await writeTransitions(tx, released.map((r) => r.transition), nowMs);
    next.changes.forEach((change, i) => {
      const parent = logged.find((c) => c.job.id === released[i]!.parentId)!;
      (parent.followOn ??= []).push(change);
    });
    logged.push(...next.changes);
    ended = next.parents;
  }
  // The event log's lock last: it is held to commit, and row locks are taken before it.
  await logEvents(tx, logged, nowMs);
  return changes;
}

/**
 * Job rows and message effects of transitions; their changes, in order, and those of jobs that
 * ended with children waiting on them (their own UPDATE said so).
 */
async function writeTransitions(tx: Queryable, planned: JobTransition[], nowMs: number): Promise<{ changes: JobChange[]; parents: JobChange[] }> {
  const transitions = await withLiveDeadLetterQueues(tx, planned);
  const changed: JobRecord[] = [];
  const deletes: number[] = [];
  const visibleAt: Array<[number, number]> = [];
  const leases: Array<[number, number, string]> = [];
  const deadLetters: Array<[number, number, string]> = [];
  const changes = transitions.map((t): JobChange => {
    const messageSeq = t.job.messageSeq;
    const job: JobRecord = t.message.kind === "delete" ? { ...t.job, messageSeq: undefined } : t.job;
    // A transition with no message effect and no event changed nothing (e.g. a repeated cancel).
    if (t.message.kind !== "none" || t.events.length > 0) changed.push(job);
    if (messageSeq !== undefined) {
      const m = t.message;
      if (m.kind === "delete") deletes.push(messageSeq);
      else if (m.kind === "visibleAt") visibleAt.push([messageSeq, m.visibleAtMs]);
      else if (m.kind === "lease") leases.push([messageSeq, m.visibleUntilMs, m.receiptToken]);
      else if (m.kind === "deadLetter") deadLetters.push([messageSeq, m.queueId, m.sourceQueueName]);
    }
    return { job, events: t.events };
  });
  const parents: JobChange[] = [];
  if (changed.length > 0) {
    const { rows } = await tx.query<JobVersionRow>(jobUpdateStatement, jobUpdateValues(changed));
    const updated = new Map(rows.map((r) => [r.id, r]));
    for (const change of changes) {
      const row = updated.get(change.job.id);
      change.version = row?.version;
      if (row?.has_children && isTerminal(change.job.status)) parents.push(change);
    }
  }
  if (deletes.length > 0) await tx.query("DELETE FROM messages WHERE seq = ANY ($1::bigint[])", [deletes]);
  if (visibleAt.length > 0) {
    await tx.query("UPDATE messages m SET visible_at_ms = t.v FROM unnest($1::bigint[], $2::bigint[]) AS t (seq, v) WHERE m.seq = t.seq", [visibleAt.map((v) => v[0]), visibleAt.map((v) => v[1])]);
  }
  if (leases.length > 0) {
    await tx.query(
      `UPDATE messages m SET visible_at_ms = t.v, receive_count = m.receive_count + 1, first_received_at_ms = coalesce(m.first_received_at_ms, $4),
         receipt_token = t.token FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS t (seq, v, token) WHERE m.seq = t.seq`,
      [leases.map((l) => l[0]), leases.map((l) => l[1]), leases.map((l) => l[2]), nowMs],
    );
  }
  if (deadLetters.length > 0) {
    // As a receive's dead-lettering does: the source is remembered for redrive.
    await tx.query(
      `UPDATE messages m SET queue_id = t.q, visible_at_ms = $4, receive_count = 0, first_received_at_ms = NULL, received_at_ms = NULL,
         receipt_token = NULL, dead_letter_source = t.source FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS t (seq, q, source) WHERE m.seq = t.seq`,
      [deadLetters.map((d) => d[0]), deadLetters.map((d) => d[1]), deadLetters.map((d) => d[2]), nowMs],
    );
  }
  return { changes, parents };
}

/**
 * Appends the changes' events to the durable log and queues the webhooks their jobs subscribed
 * to, each delivery named by its event's id (the log feeds the outbox, in the same transaction).
 */
async function logEvents(tx: Queryable, changes: readonly EventToLog[], nowMs: number): Promise<void> {
  await outboxInsert(tx, webhookDeliveriesOf(changes, await appendEvents(tx, changes, nowMs)), nowMs);
}

/**
 * Core names the dead-letter queue from its policy cache before this transaction: a queue deleted
 * since gets no message (the job fails all the same, its message deleted). The key-share lock
 * keeps a queue that is there from going before the move is written.
 */
async function withLiveDeadLetterQueues(tx: Queryable, transitions: JobTransition[]): Promise<JobTransition[]> {
  const targets = [...new Set(transitions.flatMap((t) => (t.message.kind === "deadLetter" ? [t.message.queueId] : [])))];
  if (targets.length === 0) return transitions;
  const { rows } = await tx.query<{ id: number }>("SELECT id FROM queues WHERE id = ANY ($1::bigint[]) ORDER BY id FOR KEY SHARE", [targets]);
  const live = new Set(rows.map((r) => r.id));
  return transitions.map((t) => (t.message.kind === "deadLetter" && !live.has(t.message.queueId) ? { ...t, message: { kind: "delete" } } : t));
}
