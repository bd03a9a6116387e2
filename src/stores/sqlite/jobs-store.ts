/**
 * The jobs half of the SQLite store. Every write goes through the store's group committer, so a
 * job's row and its message change in one transaction (and share the fsync of whatever else
 * committed in that turn). Decisions are core's (transitions.ts); this file runs each call's write
 * and the group's deferred submits. Its statements (job-statements.ts), how a transition is
 * written (job-transition-writer.ts) and the lease that merges the table with the group's
 * unwritten submits (lease-merge.ts) each have a file of their own.
 */
import type Database from "better-sqlite3";
import { type DeferredCreate, DeferredCreates } from "./deferred-creates.js";
import type { MessageContentCache } from "./message-content-cache.js";
import { fail, queueGone } from "../../core/errors.js";
import { type JobQueueSettings, defaultJobQueueSettings } from "../../core/job-settings.js";
import type { JobAction, JobActionResult, JobChange, JobCreateItem, JobCreateManyResult, JobCreateResult, JobHandoff, JobLeaseParams, JobLeaseResult, JobOutputStore, JobStore, WebhookOutboxStore } from "../../core/job-store.js";
import { type JobRecord, type JobStatus, newJobRecord } from "../../core/job.js";
import { childOnSubmit, submitWrite } from "../../core/jobs/dependencies.js";
import { requirementClassOf } from "../../core/jobs/requirements.js";
import { SqliteJobDependencies } from "./job-dependencies.js";
import { SqliteLeaseLimits } from "./limited-lease.js";
import { SqliteRequirementClasses } from "./requirement-classes.js";
import { RunningCounts } from "./running-counts.js";
import { messageLostTransition, retryTransition } from "../../core/jobs/transitions.js";
import type { NewMessage } from "../../core/message.js";
import type { GroupCommitter } from "./group-commit.js";
import { jobCountsOf, toExpiredJob, toJob } from "../codecs/job-row.js";
import { jobRowOf, jobUpdateValues } from "./job-rows.js";
import { type JobStatements, prepareJobStatements } from "./job-statements.js";
import { JobTransitionWriter, queueMustExist, submittedEvents } from "./job-transition-writer.js";
import { LeaseMerge } from "./lease-merge.js";
import { SqliteWebhookOutbox } from "./webhook-outbox-store.js";
import { SqliteEventLog } from "./event-log.js";
import { SqliteJobOutputs } from "./job-outputs.js";
import { perPart } from "./visible-order.js";

/** JobStore; its streamed outputs and outbox calls are those of `outputs` and `outbox`. */
export class SqliteJobStore implements Omit<JobStore, keyof JobOutputStore | keyof WebhookOutboxStore> {
  private readonly sql: JobStatements;
  /** The outbox's calls (JobStore.webhookDelivery*); transitions feed it (JobTransitionWriter.logEvents). */
  readonly outbox: SqliteWebhookOutbox;
  /** The durable event log: every transition's events are appended in its write (JobTransitionWriter.logEvents). */
  readonly eventLog: SqliteEventLog;
  private readonly dependencies: SqliteJobDependencies;
  private readonly writer: JobTransitionWriter;
  private readonly leases: LeaseMerge;
  /** Streamed outputs (JobStore.jobOutput*). */
  readonly outputs: SqliteJobOutputs;
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
    /** Queues with running-count rows, shared by every handle on the file (running-counts.ts). */
    countedQueues: Set<number>,
    /** The SQS side's: a message sent through SQS and run as a job is forgotten when its job deletes it. */
    messageCache?: MessageContentCache,
  ) {
    this.sql = prepareJobStatements(db);
    this.outbox = new SqliteWebhookOutbox(db, writes);
    this.eventLog = new SqliteEventLog(db, writes);
    this.dependencies = new SqliteJobDependencies(db);
    const counts = new RunningCounts(db, countedQueues);
    this.writer = new JobTransitionWriter(this.sql, this.outbox, this.eventLog, this.dependencies, this.deferredCreates, counts, messageCache);
    this.leases = new LeaseMerge(this.sql, this.deferredCreates, this.writer, new SqliteLeaseLimits(db, counts), new SqliteRequirementClasses(db));
    this.outputs = new SqliteJobOutputs(db, writes, this.writer, this.eventLog);
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
    // So is a job with requires: its message carries its requirement class, which the group's
    // unwritten submits (taken by any lease) don't.
    if (item.job.tenant !== undefined || item.job.dependsOn !== undefined || item.job.requires !== undefined) return this.createNow(item, nowMs);
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
    const found = existing && existing.expires_at_ms > nowMs ? this.writer.findJobOrDeferred(existing.job_id) : undefined;
    if (found) return { created: false, job: found, fingerprint: existing!.fingerprint };
    queueMustExist(job.queueName, () => this.sql.keyPut.run(job.queueId, claim.key, claim.fingerprint, job.id, claim.expiresAtMs));
    return undefined;
  }

  /**
   * Writes a job and its message now, inside the caller's write. A child (dependsOn) is judged by
   * its parents as this write reads them (core's childOnSubmit): waiting with its message
   * invisible, queued, or ended already without one. A tenant's message is in its group.
   */
  private createNow(item: JobCreateItem, nowMs: number): JobCreateResult {
    const ttlSeconds = (): number => (this.writer.settingsOf(item.job.queueId) ?? defaultJobQueueSettings).resultTtlSeconds;
    const child = item.job.dependsOn === undefined ? undefined : childOnSubmit(item.job, (id) => this.writer.findJobOrDeferred(id), nowMs, ttlSeconds());
    const { job, events, message, parentIds } = submitWrite(item, child);
    let messageSeq: number | undefined;
    if (message) {
      const requires = job.requires;
      messageSeq = queueMustExist(job.queueName, () =>
        requires === undefined ? this.sql.messageInsert.jobs(job.queueId, [message])[0]! : this.sql.messageInsert.classed(job.queueId, message, requirementClassOf(requires)),
      );
    }
    const record = newJobRecord(job, 0, messageSeq);
    record.seq = this.writer.insertJobRow(record);
    if (parentIds) this.dependencies.add(record.id, parentIds);
    this.writer.logEvents(record, events, nowMs);
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
        const seqs = queueMustExist(run[0]!.job.queueName, () => this.sql.messageInsert.jobs(queueId, run.map((e) => e.message)));
        run.forEach((e, k) => {
          e.job.messageSeq = seqs[k]!;
          e.job.seq = this.writer.insertJobRow(e.job);
          this.writer.logEvents(e.job, submittedEvents, e.job.createdAtMs);
        });
        i = end;
      }
    } catch (error) {
      for (const e of entries) e.failure = { error };
      throw error;
    }
  }

  async jobGet(p: { id: string }): Promise<JobRecord | undefined> {
    return this.writer.findJob(p.id);
  }

  async jobList(p: { queueId: number; status?: JobStatus; beforeSeq?: number; limit: number }): Promise<JobRecord[]> {
    const before = p.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows = p.status === undefined ? this.sql.listAll.all(p.queueId, before, p.limit) : this.sql.listByStatus.all(p.queueId, p.status, before, p.limit);
    return rows.map((values) => toJob(jobRowOf(values)));
  }

  async jobCountByStatus(p: { queueId: number }): Promise<Record<JobStatus, number>> {
    return jobCountsOf(this.sql.countByStatus.all(p.queueId));
  }

  async jobLease(p: JobLeaseParams): Promise<JobLeaseResult> {
    // A long poll's first try usually finds nothing when workers outnumber jobs; a one-seek probe
    // answers it outside the group commit (no savepoint, no ten-range ready query, no sync wait).
    const reports = (p.acks?.length ?? 0) > 0;
    if (!reports && this.sql.anyVisible.get(...perPart(p.queueId, p.nowMs)) === undefined) return { leased: [], changes: [], acks: [] };
    const deferred: { error?: unknown } = {};
    // A worker's report: the submits its last answer set off are on their way, and the lease is
    // for them — one more I/O poll lets them into this commit (RunOptions.afterNextPoll).
    const result = await this.writes.run((): JobLeaseResult => {
      this.sawNowMs(p.nowMs);
      const acks = this.writer.applyActions(p.acks ?? [], p.nowMs);
      const r: JobLeaseResult = { leased: [], changes: [], acks };
      // The lease itself runs after every other write of the group, in a savepoint of its own: a
      // worker's report and the submits its last answer set off usually arrive together, and the
      // worker then gets those jobs in this commit, not one commit and a round trip later.
      if (p.max > 0) {
        this.writes.atEnd(() => {
          try {
            this.leases.leaseReady({ ...p, nowMs: this.groupNowMs(p.nowMs) }, r);
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
    this.leases.leaseReady(p, r);
    return r;
  }


  async jobTransitionMany(p: { nowMs: number; actions: JobAction[] }): Promise<JobActionResult[]> {
    // Not beside the group's deferred submits: a cancel may name one, and must find its row.
    return this.writes.run(() => this.writer.applyActions(p.actions, p.nowMs));
  }

  async jobRetry(p: { id: string; nowMs: number; message: NewMessage }): Promise<JobChange> {
    return this.writes.run((): JobChange => {
      const job = this.writer.findJob(p.id);
      if (!job) fail("JobNotFound", `Job ${p.id} does not exist.`);
      const change = retryTransition(job, p);
      // The old message (in the dead-letter queue, if it is still anywhere) would run the job a second time.
      if (job.messageSeq !== undefined) this.writer.applyMessageEffect({ kind: "delete" }, job.messageSeq, p.nowMs);
      const seq = job.requires === undefined ? this.sql.messageInsert.jobs(job.queueId, [p.message])[0]! : this.sql.messageInsert.classed(job.queueId, p.message, requirementClassOf(job.requires));
      const retried: JobRecord = { ...change.job, messageSeq: seq };
      this.sql.jobUpdate.run(...jobUpdateValues(retried));
      this.writer.logEvents(retried, change.events, p.nowMs);
      return { job: retried, events: change.events };
    });
  }

  async jobListExpired(p: { nowMs: number; limit: number }): Promise<Array<{ id: string; queueName: string; account?: string }>> {
    const found = new Map<string, { id: string; queueName: string; account?: string }>();
    for (const row of [...this.sql.deadlinePassed.all(p.nowMs, p.limit), ...this.sql.leaseExpired.all(p.nowMs, p.limit)]) found.set(row.id, toExpiredJob(row));
    return [...found.values()].slice(0, p.limit);
  }

  async jobPrune(p: { nowMs: number; limit: number }): Promise<{ jobs: number; idempotencyKeys: number }> {
    return this.writes.run(() => ({
      jobs: this.sql.prune.run(p.nowMs, p.nowMs, p.limit).changes,
      idempotencyKeys: this.sql.keysPrune.run(p.nowMs, p.limit).changes,
    }));
  }

  async jobQueueSettingsGet(p: { queueId: number }): Promise<JobQueueSettings | undefined> {
    return this.writer.settingsOf(p.queueId);
  }

  async jobQueueSettingsPut(p: { queueId: number; settings: JobQueueSettings; nowMs: number }): Promise<void> {
    await this.writes.run(() => queueMustExist(`#${p.queueId}`, () => this.sql.settingsPut.run(p.queueId, JSON.stringify(p.settings), p.nowMs)));
  }

  /**
   * Inside a write, just before the caller deletes the queue's messages sent before
   * `beforeSentAtMs` (retention, or a purge): their live jobs end (messageLostTransition), their
   * webhooks queued in the same write. `limit` (-1: all): the first that many by send time,
   * the slice the caller's delete takes.
   */
  endJobsOfMessages(p: { queueId: number; beforeSentAtMs: number; nowMs: number; reason: "expired" | "purged"; limit: number }): JobChange[] {
    const rows = this.sql.liveJobsOfMessages.all({ queueId: p.queueId, before: p.beforeSentAtMs, limit: p.limit });
    if (rows.length === 0) return [];
    const resultTtlSeconds = (this.writer.settingsOf(p.queueId) ?? defaultJobQueueSettings).resultTtlSeconds;
    return rows.map((values) => {
      const job = toJob(jobRowOf(values));
      return this.writer.apply(messageLostTransition(job, { nowMs: p.nowMs, resultTtlSeconds, reason: p.reason }), job, p.nowMs);
    });
  }
}
