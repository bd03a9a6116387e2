/**
 * The jobs half of the SQLite store. Every write goes through the store's group committer, so a
 * job's row and its message change in one transaction (and share the fsync of whatever else
 * committed in that turn). Decisions are core's (transitions.ts); this file reads, calls them,
 * and applies their result: the job row, the message effect, the webhook outbox rows.
 */
import type Database from "better-sqlite3";
import { type DeferredCreate, DeferredCreates, comesBefore } from "./deferred-creates.js";
import type { MessageContentCache } from "./message-content-cache.js";
import { prepareMessageInsert } from "./message-insert.js";
import { prepareQueueExists } from "./queue-exists.js";
import { readyUngroupedQuery } from "./ready-order.js";
import { SluiceError, fail } from "../../core/errors.js";
import { type JobQueueSettings, defaultJobQueueSettings } from "../../core/jobs/job-settings.js";
import type {
  JobAck,
  JobAckResult,
  JobChange,
  JobCreateItem,
  JobCreateManyResult,
  JobCreateResult,
  JobHandoff,
  JobLeaseParams,
  JobLeaseResult,
  JobStore,
  RetryPolicy,
  WebhookDelivery,
} from "../../core/jobs/job-store.js";
import { type JobError, type JobEventType, type JobRecord, type JobStatus, type LeasedJob, isTerminal, jobStatuses, newJobRecord, waitingVisibleAtMs } from "../../core/jobs/job.js";
import { childOnParentDone, childOnSubmit, dependencyVerdict } from "../../core/jobs/dependencies.js";
import { SqliteJobDependencies } from "./job-dependencies.js";
import { SqliteLeaseLimits } from "./limited-lease.js";
import {
  type JobTransition,
  type MessageEffect,
  cancelTransition,
  completeTransition,
  expiryTransition,
  failTransition,
  heartbeatTransition,
  messageLostTransition,
  releaseTransition,
  jobFromMessage,
  leaseTransition,
  retryTransition,
  webhookEventsOf,
} from "../../core/jobs/transitions.js";
import type { NewMessage } from "../../core/message.js";
import type { GroupCommitter } from "./group-commit.js";
import { jobColumns, jobInsertValues, jobRowOf, jobSelectColumns, jobUpdateValues, mutableJobColumns, toJob } from "./job-rows.js";
import { SqliteWebhookOutbox } from "./webhook-outbox-store.js";
import { SqliteEventLog } from "./event-log.js";
import { eventSnapshotJson, webhookIdOfEvent } from "../../core/jobs/job-event-log.js";
import { boundLimit } from "./bound-limit.js";
import { marks } from "./sized-statements.js";

const selectJob = jobSelectColumns.join(", ");
/** The event a submit's job is logged with when its rows are written. */
const submittedEvents: readonly JobEventType[] = ["job.queued"];

interface ReadyMessageRow {
  seq: number;
  message_id: string;
  priority: number;
  sent_at_ms: number;
  visible_at_ms: number;
}

export class SqliteJobStore implements JobStore {
  private readonly sql;
  private readonly outbox: SqliteWebhookOutbox;
  /** The durable event log: every transition's events are appended in its write (logEvents). */
  readonly eventLog: SqliteEventLog;
  private readonly dependencies: SqliteJobDependencies;
  private readonly leaseLimits: SqliteLeaseLimits;
  /** The group's submits not written yet (deferred-creates.ts says why). */
  private readonly deferredCreates = new DeferredCreates();
  /**
   * The latest nowMs a submit or lease of group `latestGroup` was given. A lease run at the end of
   * its group runs at it (JobStore.jobLease allows that): the jobs submitted beside it are
   * ready by then. Times come from callers only; the store reads no clock.
   */
  private latestNowMs = 0;
  private latestGroup = -1;

  constructor(
    db: Database.Database,
    private readonly writes: GroupCommitter,
    /** The SQS side's: a message sent through SQS and run as a job is forgotten when its job deletes it. */
    private readonly messageCache?: MessageContentCache,
  ) {
    this.outbox = new SqliteWebhookOutbox(db);
    this.eventLog = new SqliteEventLog(db, writes);
    this.dependencies = new SqliteJobDependencies(db);
    this.leaseLimits = new SqliteLeaseLimits(db);
    this.sql = {
      // Job rows are read as arrays and written with positional parameters (job-rows.ts says why).
      jobById: db.prepare<[string], unknown[]>(`SELECT ${selectJob} FROM jobs WHERE id = ?`).raw(),
      jobInsert: db.prepare(`INSERT INTO jobs (${jobColumns.join(", ")}) VALUES (${marks(jobColumns.length)})`),
      jobUpdate: db.prepare(`UPDATE jobs SET ${mutableJobColumns.map((c) => `${c} = ?`).join(", ")} WHERE id = ?`),
      listAll: db.prepare<[number, number, number], unknown[]>(`SELECT ${selectJob} FROM jobs WHERE queue_id = ? AND seq < ? ORDER BY seq DESC ${boundLimit()}`).raw(),
      listByStatus: db
        .prepare<[number, string, number, number], unknown[]>(`SELECT ${selectJob} FROM jobs WHERE queue_id = ? AND status = ? AND seq < ? ORDER BY seq DESC ${boundLimit()}`)
        .raw(),
      countByStatus: db.prepare<[number], { status: string; n: number }>("SELECT status, count(*) AS n FROM jobs WHERE queue_id = ? GROUP BY status"),
      leaseExpired: db.prepare<[number, number], { id: string; queue_name: string }>(
        `SELECT id, queue_name FROM jobs WHERE status = 'running' AND lease_expires_at_ms <= ? ORDER BY lease_expires_at_ms ${boundLimit()}`,
      ),
      deadlinePassed: db.prepare<[number, number], { id: string; queue_name: string }>(
        `SELECT id, queue_name FROM jobs WHERE status = 'running' AND deadline_at_ms IS NOT NULL AND deadline_at_ms <= ? ORDER BY deadline_at_ms ${boundLimit()}`,
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
        .prepare<[number, number], unknown[]>(
          `SELECT ${selectJob} FROM jobs WHERE id IN (SELECT message_id FROM messages WHERE queue_id = ? AND sent_at_ms < ?) AND status IN ('waiting', 'queued', 'running')`,
        )
        .raw(),
      settingsPut: db.prepare(
        `INSERT INTO job_queue_settings (queue_id, settings, updated_at_ms) VALUES (?, ?, ?)
         ON CONFLICT (queue_id) DO UPDATE SET settings = excluded.settings, updated_at_ms = excluded.updated_at_ms`,
      ),
      // Job messages are not remembered: leases read them with the job (the `ready` SELECT below).
      messageInsert: prepareMessageInsert(db),
      // Whether anything of the queue is visible now: one index seek (jobLease's shortcut).
      anyVisible: db.prepare<[number, number], number>("SELECT 1 FROM messages INDEXED BY messages_visible WHERE queue_id = ? AND visible_at_ms <= ? LIMIT 1").pluck(),
      // The same order as a plain receive (messages_ready_ungrouped); job messages have no group.
      // Without the body: a job message's body is its job's input, read with the job; only a
      // message adopted as a new job (sent through SQS) needs it, and reads it then.
      ready: db.prepare<[number, number, number, number], ReadyMessageRow>(readyUngroupedQuery("seq, message_id, priority, sent_at_ms, visible_at_ms")),
      messageBody: db.prepare<[number], string>("SELECT body FROM messages WHERE seq = ?").pluck(),
      messageDelete: db.prepare<[number]>("DELETE FROM messages WHERE seq = ?"),
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
      queueExists: prepareQueueExists(db),
    };
  }

  async jobCreateMany(p: { items: JobCreateItem[]; nowMs: number; handoff?: JobHandoff }): Promise<JobCreateManyResult> {
    const written = await this.writes.run(
      (): { out: JobCreateManyResult; deferred: DeferredCreate[] } => {
        const group = this.writes.group;
        // Their rows are written later in this group (deferred-creates.ts): queues are checked now,
        // all before anything is claimed or deferred, so a refused call leaves nothing behind.
        for (const { job } of p.items) {
          if (!this.deferredCreates.queueChecked(group, job.queueId, () => this.sql.queueExists(job.queueId))) queueGone(job.queueName);
        }
        this.sawNowMs(p.nowMs);
        const deferred: DeferredCreate[] = [];
        const results: JobCreateResult[] = [];
        try {
          for (const item of p.items) results.push(this.createOne(item, p.nowMs, deferred));
        } catch (err) {
          this.deferredCreates.withdraw(deferred); // this call's savepoint undoes its claims
          throw err;
        }
        const out: JobCreateManyResult = { results };
        const handoff = p.handoff;
        // The handoff runs at the end of the group, once every submit of this turn is in: the
        // worker then gets them all in this commit, not one now and the rest a round trip later.
        // This call is answered after the commit, so its result is on `out` by then. atEnd gives
        // the lease a savepoint of its own: a failing lease is undone alone.
        if (handoff && deferred.length > 0) {
          this.writes.atEnd(() => {
            out.handoff = this.leaseInWrite({ ...handoff, nowMs: this.groupNowMs(handoff.nowMs) });
          });
        }
        return { out, deferred };
      },
      { besideDeferred: true },
    );
    for (const entry of written.deferred) if (entry.failure) throw entry.failure.error;
    return written.out;
  }

  /**
   * Inside the caller's write (a schedule's fire): each item written now, not deferred to the
   * group's end, so it stands or falls with that write. Runs after the group's deferred submits
   * were written (the write is not besideDeferred), so a key they claimed is found in the table.
   */
  createInWrite(items: readonly JobCreateItem[], nowMs: number): JobCreateResult[] {
    return items.map((item) => {
      if (!this.sql.queueExists(item.job.queueId)) queueGone(item.job.queueName);
      return this.claimKey(item, nowMs) ?? this.createNow(item, nowMs);
    });
  }

  /** One item of jobCreateMany, inside its write: the key looked up and claimed, the rows deferred. */
  private createOne(item: JobCreateItem, nowMs: number, deferred: DeferredCreate[]): JobCreateResult {
    const found = this.claimKey(item, nowMs);
    if (found) return found;
    // A tenant's job goes in its group (fair leases read the table), and a child is judged by its
    // parents as they are now: both are written at once, not at the group's end.
    if (item.job.tenant !== undefined || item.job.dependsOn !== undefined) return this.createNow(item, nowMs);
    // Job messages without a tenant have no group: leases read the ungrouped ready index.
    const message = item.message.groupId === undefined && item.message.deduplicationId === undefined ? item.message : { ...item.message, groupId: undefined, deduplicationId: undefined };
    const entry = this.deferCreate(newJobRecord(item.job, 0, 0), message);
    deferred.push(entry);
    return { created: true, job: entry.job };
  }

  /**
   * Claims the item's Idempotency-Key; answers the job a live claim names instead (an expired claim
   * is free again, and so is one whose job is gone — its queue was purged, say).
   */
  private claimKey(item: JobCreateItem, nowMs: number): JobCreateResult | undefined {
    const { job, idempotency: claim } = item;
    if (!claim) return undefined;
    const existing = this.sql.keyGet.get(job.queueId, claim.key);
    const found = existing && existing.expires_at_ms > nowMs ? this.findJobOrDeferred(existing.job_id) : undefined;
    if (found) return { created: false, job: found, fingerprint: existing!.fingerprint };
    queueMustExist(job.queueName, () => this.sql.keyPut.run(job.queueId, claim.key, claim.fingerprint, job.id, claim.expiresAtMs));
    return undefined;
  }

  /**
   * Writes a job and its message now, inside the caller's write. A child (dependsOn) is judged by
   * its parents as this write reads them (core's dependencyVerdict): waiting with its message
   * invisible, queued, or ended already without one. A tenant's message is in its group.
   */
  private createNow(item: JobCreateItem, nowMs: number): JobCreateResult {
    let job = item.job;
    let events: readonly JobEventType[] = submittedEvents;
    let withMessage = true;
    if (job.dependsOn !== undefined) {
      const parents = job.dependsOn.map((id) => {
        const parent = this.findJobOrDeferred(id);
        if (!parent) fail("ValidationFailed", `dependsOn names job ${id}, which does not exist (or was pruned).`);
        return { id, status: parent.status, error: parent.error };
      });
      const resultTtlSeconds = (this.settingsOf(job.queueId) ?? defaultJobQueueSettings).resultTtlSeconds;
      ({ job, events, withMessage } = childOnSubmit(job, dependencyVerdict(parents, job.onParentFailure ?? "fail"), nowMs, resultTtlSeconds));
    }
    let messageSeq: number | undefined;
    if (withMessage) {
      const message: NewMessage = { ...item.message, groupId: job.tenant, deduplicationId: undefined, visibleAtMs: job.status === "waiting" ? waitingVisibleAtMs : item.message.visibleAtMs };
      [messageSeq] = queueMustExist(job.queueName, () => this.sql.messageInsert.many(job.queueId, [message]));
    }
    const record = newJobRecord(job, 0, messageSeq);
    record.seq = this.insertJobRow(record);
    if (record.status === "waiting") this.dependencies.add(record.id, record.dependsOn!);
    this.logEvents(record, events, nowMs);
    return { created: true, job: record };
  }

  private sawNowMs(nowMs: number): void {
    const group = this.writes.group;
    if (this.latestGroup !== group) {
      this.latestGroup = group;
      this.latestNowMs = nowMs;
    } else if (nowMs > this.latestNowMs) {
      this.latestNowMs = nowMs;
    }
  }

  /** When a lease at the end of the running group runs: `nowMs`, or a later time of the group's writes. */
  private groupNowMs(nowMs: number): number {
    return this.latestGroup === this.writes.group && this.latestNowMs > nowMs ? this.latestNowMs : nowMs;
  }

  /** Leaves a submit's rows to be written later in its group (deferred-creates.ts). */
  private deferCreate(job: JobRecord, message: NewMessage): DeferredCreate {
    const { entry, first } = this.deferredCreates.add(this.writes.group, job, message);
    if (first) this.writes.deferWrites(() => this.writeDeferredCreates());
    return entry;
  }

  /** Inserts the group's submits no lease took, queued; if that fails, every one of their submits fails. */
  private writeDeferredCreates(): void {
    const entries = this.deferredCreates.drain();
    try {
      // Messages of consecutive submits to one queue go in one multi-row INSERT per 10.
      for (let i = 0; i < entries.length; ) {
        const queueId = entries[i]!.job.queueId;
        let end = i + 1;
        while (end < entries.length && entries[end]!.job.queueId === queueId) end++;
        const run = entries.slice(i, end);
        const seqs = queueMustExist(run[0]!.job.queueName, () => this.sql.messageInsert.many(queueId, run.map((e) => e.message)));
        run.forEach((e, k) => {
          e.job.messageSeq = seqs[k]!;
          e.job.seq = this.insertJobRow(e.job);
          this.logEvents(e.job, submittedEvents, e.job.createdAtMs);
        });
        i = end;
      }
    } catch (error) {
      for (const e of entries) e.failure = { error };
      throw error;
    }
  }

  private insertJobRow(job: Omit<JobRecord, "seq">): number {
    return Number(queueMustExist(job.queueName, () => this.sql.jobInsert.run(jobInsertValues(job))).lastInsertRowid);
  }

  async jobGet(p: { id: string }): Promise<JobRecord | undefined> {
    return this.findJob(p.id);
  }

  async jobList(p: { queueId: number; status?: JobStatus; beforeSeq?: number; limit: number }): Promise<JobRecord[]> {
    const before = p.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows = p.status === undefined ? this.sql.listAll.all(p.queueId, before, p.limit) : this.sql.listByStatus.all(p.queueId, p.status, before, p.limit);
    return rows.map((values) => toJob(jobRowOf(values)));
  }

  async jobCountByStatus(p: { queueId: number }): Promise<Record<JobStatus, number>> {
    const counts = Object.fromEntries(jobStatuses.map((s) => [s, 0])) as Record<JobStatus, number>;
    for (const row of this.sql.countByStatus.all(p.queueId)) counts[row.status as JobStatus] = row.n;
    return counts;
  }

  async jobLease(p: JobLeaseParams): Promise<JobLeaseResult> {
    // A long poll's first try usually finds nothing when workers outnumber jobs; a one-seek probe
    // answers it outside the group commit (no savepoint, no ten-range ready query, no sync wait).
    const reports = (p.acks?.length ?? 0) > 0;
    if (!reports && this.sql.anyVisible.get(p.queueId, p.nowMs) === undefined) return { leased: [], changes: [], acks: [] };
    const deferred: { error?: unknown } = {};
    // A worker's report: the submits its last answer set off are on their way, and the lease is
    // for them — one more I/O poll lets them into this commit (RunOptions.afterNextPoll).
    const result = await this.writes.run((): JobLeaseResult => {
      this.sawNowMs(p.nowMs);
      const acks = (p.acks ?? []).map((ack) => this.applyAck(ack, p.nowMs));
      const r: JobLeaseResult = { leased: [], changes: [], acks };
      // The lease itself runs after every other write of the group, in a savepoint of its own: a
      // worker's report and the submits its last answer set off usually arrive together, and the
      // worker then gets those jobs in this commit, not one commit and a round trip later.
      if (p.max > 0) {
        this.writes.atEnd(() => {
          try {
            this.leaseReady({ ...p, nowMs: this.groupNowMs(p.nowMs) }, r);
          } catch (err) {
            deferred.error = err; // undone alone; the acks stand, and the caller hears of it
            throw err;
          }
        });
      }
      return r;
      // Beside the group's deferred submits: its acks name leased jobs, and its lease takes them.
    }, { afterNextPoll: reports, besideDeferred: true });
    if (deferred.error !== undefined) throw deferred.error;
    return result;
  }

  /** A submit's handoff lease, inside its write: ready messages in receive order. */
  private leaseInWrite(p: JobHandoff): JobLeaseResult {
    const r: JobLeaseResult = { leased: [], changes: [], acks: [] };
    this.leaseReady(p, r);
    return r;
  }

  /**
   * Leases ready jobs in receive order into `r`, up to `p.max`: messages of the table and the
   * group's submits not yet written (deferred-creates.ts), merged. If it fails, the submits it
   * took are left to be written queued: their rows go with its savepoint.
   */
  private leaseReady(p: JobLeaseParams, r: JobLeaseResult): void {
    const taken: DeferredCreate[] = [];
    try {
      if (this.leaseLimits.applies(p)) this.leaseLimited(p, r, taken);
      else this.leaseReadyMerged(p, r, taken);
    } catch (err) {
      for (const entry of taken) entry.taken = false;
      throw err;
    }
  }

  /**
   * A lease on a queue with limits or tenants (limited-lease.ts): as many as the limits allow now,
   * tenants' jobs in fair order; `r.limited` says what held it back with jobs ready.
   */
  private leaseLimited(p: JobLeaseParams, r: JobLeaseResult, taken: DeferredCreate[]): void {
    const before = r.leased.length;
    const allowance = this.leaseLimits.allowance(p, p.max - before);
    let capped = false;
    if (allowance.allowed > 0) {
      if (this.leaseLimits.hasTenants(p.queueId)) {
        ({ capped } = this.leaseLimits.pickFair(p, allowance.allowed, (row) => {
          const n = r.leased.length;
          this.leaseRow(row, p, r);
          return r.leased.length > n;
        }));
      } else {
        this.leaseReadyMerged({ ...p, max: before + allowance.allowed }, r, taken);
      }
    }
    if (allowance.bucket) this.leaseLimits.spend(p.queueId, allowance.bucket, r.leased.length - before);
    if (r.leased.length < p.max && (allowance.limitedBy !== undefined || capped)) {
      r.limited = allowance.limitedBy !== undefined ? { by: allowance.limitedBy, retryAtMs: allowance.retryAtMs } : { by: "maxRunningPerTenant" };
    }
  }

  private leaseReadyMerged(p: JobLeaseParams, r: JobLeaseResult, taken: DeferredCreate[]): void {
    // Every job taken leaves the ready set (leased, deleted or dead-lettered), so this ends.
    while (r.leased.length < p.max) {
      const wanted = p.max - r.leased.length;
      // The ten-priority ready query only if the table has anything visible (one seek says).
      const rows = this.sql.anyVisible.get(p.queueId, p.nowMs) === undefined ? [] : this.sql.ready.all(p.queueId, p.nowMs, p.minSentAtMs, wanted);
      const fresh = this.deferredCreates.ready(p.queueId, p.nowMs, p.minSentAtMs, wanted);
      let i = 0;
      let j = 0;
      for (let n = 0; n < wanted && (i < rows.length || j < fresh.length); n++) {
        if (j < fresh.length && (i === rows.length || comesBefore(fresh[j]!, rows[i]!))) {
          const entry = fresh[j++]!;
          this.leaseDeferred(entry, p, r);
          taken.push(entry);
        } else {
          this.leaseRow(rows[i++]!, p, r);
        }
      }
      // A source that gave fewer than asked for and was used up is empty now (taking never adds).
      const tableEmpty = rows.length < wanted && i === rows.length;
      const deferredEmpty = fresh.length < wanted && j === fresh.length;
      if (tableEmpty && deferredEmpty) break;
    }
  }

  /** Leases one ready message of the table (or skips it, if its job is over). */
  private leaseRow(row: ReadyMessageRow, p: JobLeaseParams, r: JobLeaseResult): void {
    const job = this.jobForMessage(row, p);
    const t = leaseTransition(job, p, row.seq);
    if ("skip" in t) {
      this.applyMessageEffect(t.message, row.seq, p.nowMs);
      return;
    }
    const applied = this.apply(t, p.nowMs);
    r.changes.push(applied);
    if (applied.job.status === "running") r.leased.push(applied.job as LeasedJob);
  }

  /** Leases a submit of this group as its rows are written: the job running, its message in flight. */
  private leaseDeferred(entry: DeferredCreate, p: JobLeaseParams, r: JobLeaseResult): void {
    const t = leaseTransition(entry.job, p, 0);
    // A fresh job is queued: its lease is never skipped and always leaves it running.
    if ("skip" in t || t.message.kind !== "lease") throw new Error(`a submitted job ${entry.job.id} could not be leased`);
    const messageSeq = this.sql.messageInsert.leased(entry.job.queueId, entry.message, {
      visibleUntilMs: t.message.visibleUntilMs,
      receiptToken: t.message.receiptToken,
      receivedAtMs: p.nowMs,
    });
    // One copy of the record, its seq filled in once the row has one (jobColumns has no seq).
    const job = { ...t.job, messageSeq };
    job.seq = this.insertJobRow(job);
    entry.taken = true;
    entry.job.seq = job.seq;
    entry.job.messageSeq = messageSeq;
    this.logEvents(entry.job, submittedEvents, entry.job.createdAtMs);
    this.logEvents(job, t.events, p.nowMs);
    r.changes.push({ job, events: t.events });
    r.leased.push(job as LeasedJob);
  }

  async jobHeartbeat(p: { id: string; leaseToken: string; nowMs: number; leaseSeconds?: number; progress?: number }): Promise<JobChange> {
    return this.transitionOne(p.id, p.nowMs, (job) => heartbeatTransition(job, p));
  }

  async jobComplete(p: { id: string; leaseToken: string; nowMs: number; outputJson: string; resultTtlSeconds: number }): Promise<JobChange> {
    return this.transitionOne(p.id, p.nowMs, (job) => completeTransition(job, p, p.nowMs));
  }

  async jobFail(p: RetryPolicy & { id: string; leaseToken: string; nowMs: number; error: JobError; retryable: boolean; retryAfterSeconds?: number }): Promise<JobChange> {
    return this.transitionOne(p.id, p.nowMs, (job) => failTransition(job, p, p.nowMs));
  }

  async jobRelease(p: { id: string; leaseToken: string; nowMs: number; resultTtlSeconds: number }): Promise<JobChange> {
    return this.transitionOne(p.id, p.nowMs, (job) => releaseTransition(job, p));
  }

  async jobCancel(p: { id: string; nowMs: number; resultTtlSeconds: number }): Promise<JobChange> {
    return this.transitionOne(p.id, p.nowMs, (job) => cancelTransition(job, p));
  }

  async jobRetry(p: { id: string; nowMs: number; message: NewMessage }): Promise<JobChange> {
    return this.writes.run((): JobChange => {
      const job = this.findJob(p.id);
      if (!job) fail("JobNotFound", `Job ${p.id} does not exist.`);
      const change = retryTransition(job, p);
      // The old message (in the dead-letter queue, if it is still anywhere) would run the job a second time.
      if (job.messageSeq !== undefined) this.applyMessageEffect({ kind: "delete" }, job.messageSeq, p.nowMs);
      const retried: JobRecord = { ...change.job, messageSeq: this.sql.messageInsert(job.queueId, p.message) };
      this.sql.jobUpdate.run(jobUpdateValues(retried));
      this.logEvents(retried, change.events, p.nowMs);
      return { job: retried, events: change.events };
    });
  }

  async jobListExpired(p: { nowMs: number; limit: number }): Promise<Array<{ id: string; queueName: string }>> {
    const found = new Map<string, string>();
    for (const row of this.sql.deadlinePassed.all(p.nowMs, p.limit)) found.set(row.id, row.queue_name);
    for (const row of this.sql.leaseExpired.all(p.nowMs, p.limit)) found.set(row.id, row.queue_name);
    return [...found].slice(0, p.limit).map(([id, queueName]) => ({ id, queueName }));
  }

  async jobExpire(p: RetryPolicy & { id: string; nowMs: number }): Promise<JobChange | undefined> {
    return this.writes.run(() => {
      const job = this.findJob(p.id);
      if (!job) return undefined;
      const t = expiryTransition(job, p);
      return t ? this.apply(t, p.nowMs) : undefined;
    });
  }

  async jobPrune(p: { nowMs: number; limit: number }): Promise<{ jobs: number; idempotencyKeys: number }> {
    return this.writes.run(() => ({
      jobs: this.sql.prune.run(p.nowMs, p.nowMs, p.limit).changes,
      idempotencyKeys: this.sql.keysPrune.run(p.nowMs, p.limit).changes,
    }));
  }

  async jobQueueSettingsGet(p: { queueId: number }): Promise<JobQueueSettings | undefined> {
    return this.settingsOf(p.queueId);
  }

  async jobQueueSettingsPut(p: { queueId: number; settings: JobQueueSettings; nowMs: number }): Promise<void> {
    await this.writes.run(() => queueMustExist(`#${p.queueId}`, () => this.sql.settingsPut.run(p.queueId, JSON.stringify(p.settings), p.nowMs)));
  }

  async webhookDeliveryClaim(p: { nowMs: number; limit: number; claimMs: number }): Promise<WebhookDelivery[]> {
    return this.writes.run(() => this.outbox.claim(p.nowMs, p.limit, p.claimMs));
  }

  async webhookDeliveryNextDueAt(): Promise<number | undefined> {
    return this.outbox.nextDueAt();
  }

  async webhookDeliveryRecord(p: { id: string; nowMs: number; delivered: boolean; statusCode?: number; error?: string; nextAttemptAtMs?: number }): Promise<void> {
    await this.writes.run(() => this.outbox.record(p));
  }

  async webhookDeliveryList(p: { jobId: string }): Promise<WebhookDelivery[]> {
    return this.outbox.listForJob(p.jobId);
  }

  /**
   * Inside a write, just before the caller deletes the queue's messages sent before
   * `beforeSentAtMs` (retention, or a purge): their live jobs end (messageLostTransition), their
   * webhooks queued in the same write.
   */
  endJobsOfMessages(p: { queueId: number; beforeSentAtMs: number; nowMs: number; reason: "expired" | "purged" }): JobChange[] {
    const rows = this.sql.liveJobsOfMessages.all(p.queueId, p.beforeSentAtMs);
    if (rows.length === 0) return [];
    const resultTtlSeconds = (this.settingsOf(p.queueId) ?? defaultJobQueueSettings).resultTtlSeconds;
    return rows.map((values) => this.apply(messageLostTransition(toJob(jobRowOf(values)), { nowMs: p.nowMs, resultTtlSeconds, reason: p.reason }), p.nowMs));
  }

  private settingsOf(queueId: number): JobQueueSettings | undefined {
    const json = this.sql.settingsGet.get(queueId);
    return json ? (JSON.parse(json) as JobQueueSettings) : undefined;
  }

  /** A job by id (its row read as an array: job-rows.ts). */
  private findJob(id: string): JobRecord | undefined {
    const values = this.sql.jobById.get(id);
    return values && toJob(jobRowOf(values));
  }

  /**
   * A job by id, a submit of this group not yet written included: for the writes that run beside
   * deferred submits (besideDeferred) and may name one — a replayed Idempotency-Key, an ack.
   */
  private findJobOrDeferred(id: string): JobRecord | undefined {
    return this.findJob(id) ?? this.deferredCreates.job(id);
  }

  // ---- internals (run inside a write) ----

  /** One ack inside the lease's write; a refusal (thrown by the transition, before any write) is its result. */
  private applyAck(ack: JobAck, nowMs: number): JobAckResult {
    try {
      // A submit of this group not written yet is queued, so its transition refuses the ack before any write.
      const job = this.findJobOrDeferred(ack.id);
      if (!job) fail("JobNotFound", `Job ${ack.id} does not exist.`);
      const t = ack.kind === "complete" ? completeTransition(job, ack, nowMs) : failTransition(job, ack, nowMs);
      return { ok: true, change: this.apply(t, nowMs) };
    } catch (err) {
      if (err instanceof SluiceError) return { ok: false, error: { code: err.code, message: err.message } };
      throw err;
    }
  }

  private transitionOne(id: string, nowMs: number, decide: (job: JobRecord) => JobTransition): Promise<JobChange> {
    return this.writes.run(() => {
      const job = this.findJob(id);
      if (!job) fail("JobNotFound", `Job ${id} does not exist.`);
      return this.apply(decide(job), nowMs);
    });
  }

  /** The message's job; a message without one (sent through SQS, or its job pruned) is adopted as a new job. */
  private jobForMessage(row: ReadyMessageRow, p: JobLeaseParams): JobRecord {
    const existing = this.findJob(row.message_id);
    if (existing) return existing;
    const adopted = {
      ...jobFromMessage({ message: { messageId: row.message_id, body: this.sql.messageBody.get(row.seq)!, priority: row.priority, sentAtMs: row.sent_at_ms }, queueId: p.queueId, queueName: p.queueName, nowMs: p.nowMs, ...p.adopt }),
      messageSeq: row.seq,
    };
    const info = this.sql.jobInsert.run(jobInsertValues(adopted));
    return { ...adopted, seq: Number(info.lastInsertRowid) };
  }

  private apply(decided: JobTransition, nowMs: number): JobChange {
    const t = this.withLiveDeadLetterQueue(decided);
    const messageSeq = t.job.messageSeq;
    const job: JobRecord = t.message.kind === "delete" ? { ...t.job, messageSeq: undefined } : t.job;
    // A transition with no message effect and no event changed nothing (e.g. a repeated cancel).
    if (t.message.kind !== "none" || t.events.length > 0) this.sql.jobUpdate.run(jobUpdateValues(job));
    if (messageSeq !== undefined) this.applyMessageEffect(t.message, messageSeq, nowMs);
    this.logEvents(job, t.events, nowMs);
    const followOn = isTerminal(job.status) ? this.releaseChildren(job, nowMs) : undefined;
    return followOn ? { job, events: t.events, followOn } : { job, events: t.events };
  }

  /**
   * A parent just finished: each of its waiting children is judged again by all its parents (core's
   * dependencyVerdict) and queued, or ended like it — their own children in turn, in this write.
   * One index seek for a job nobody depends on.
   */
  private releaseChildren(parent: JobRecord, nowMs: number): JobChange[] | undefined {
    const childIds = this.dependencies.childrenOf(parent.id);
    if (childIds.length === 0) return undefined;
    const changes: JobChange[] = [];
    for (const childId of childIds) {
      const child = this.findJob(childId);
      if (!child || child.status !== "waiting") continue;
      const parents = child.dependsOn!.map((id) => {
        const p = id === parent.id ? parent : this.findJob(id);
        // A parent pruned or deleted meanwhile finished long ago: it counts as it ended, or as gone.
        return p ? { id, status: p.status, error: p.error } : { id, status: "canceled" as const, error: { message: `Job ${id} no longer exists.` } };
      });
      const resultTtlSeconds = (this.settingsOf(child.queueId) ?? defaultJobQueueSettings).resultTtlSeconds;
      const t = childOnParentDone(child, dependencyVerdict(parents, child.onParentFailure ?? "fail"), nowMs, resultTtlSeconds);
      if (t) changes.push(this.apply(t, nowMs));
    }
    return changes.length > 0 ? changes : undefined;
  }

  /**
   * Core names the dead-letter queue from its policy cache (seconds old) before this write: a
   * queue deleted since gets no message (queue-exists.ts). The job fails all the same, and its
   * message is deleted, as on a queue without a dead-letter queue — left in the source, it would
   * be leased again and rerun the failed job as a redrive does. One seek per dead-lettered job,
   * on the failure path only.
   */
  private withLiveDeadLetterQueue(t: JobTransition): JobTransition {
    if (t.message.kind !== "deadLetter" || this.sql.queueExists(t.message.queueId)) return t;
    return { ...t, message: { kind: "delete" } };
  }

  /**
   * Appends a change's events to the durable log and queues the webhooks the job subscribed to,
   * each delivery named by its event's id (the log feeds the outbox, in the same write).
   */
  private logEvents(job: JobRecord, events: readonly JobEventType[], nowMs: number): void {
    if (events.length === 0) return;
    const snapshot = eventSnapshotJson(job);
    const wanted = webhookEventsOf(job, events);
    for (const event of events) {
      const id = this.eventLog.appendOne(job, snapshot, event, nowMs);
      if (wanted.includes(event)) this.outbox.insert(job, event, nowMs, webhookIdOfEvent(id));
    }
  }

  private applyMessageEffect(effect: MessageEffect, seq: number, nowMs: number): void {
    switch (effect.kind) {
      case "none":
        return;
      case "delete":
        this.sql.messageDelete.run(seq);
        this.messageCache?.forget(seq);
        return;
      case "visibleAt":
        this.sql.messageVisibleAt.run(effect.visibleAtMs, seq);
        return;
      case "lease":
        this.sql.messageLease.run(effect.visibleUntilMs, nowMs, effect.receiptToken, seq);
        return;
      case "deadLetter":
        this.sql.messageDeadLetter.run(effect.queueId, nowMs, effect.sourceQueueName, seq);
        return;
    }
  }
}

/**
 * A write naming a queue that was deleted meanwhile (the caller held it from a cache) fails on the
 * foreign key; it is reported as QueueNotFound, which callers know how to recover from, rather
 * than as a raw SQLite error (an InternalError on the wire).
 */
function queueMustExist<T>(queueName: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if ((err as { code?: unknown }).code === "SQLITE_CONSTRAINT_FOREIGNKEY") queueGone(queueName);
    throw err;
  }
}

function queueGone(queueName: string): never {
  fail("QueueNotFound", `Queue ${queueName} does not exist (it was deleted).`);
}
