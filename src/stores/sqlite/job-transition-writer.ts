/**
 * How the jobs half of the SQLite store writes a job transition inside a write: core decides
 * (transitions.ts), this applies the result — the job row, the message effect, the events in the
 * durable log with the webhook outbox rows they feed, and the children a finished parent releases
 * — and finds the jobs writes act on (a submit of the running group not yet written included).
 */
import { SluiceError, fail, queueGone } from "../../core/errors.js";
import { childOnParentDone } from "../../core/jobs/dependencies.js";
import { eventSnapshotJson } from "../../core/job-event-log.js";
import { type JobQueueSettings, defaultJobQueueSettings } from "../../core/job-settings.js";
import type { JobAction, JobActionResult, JobChange, JobLeaseParams } from "../../core/job-store.js";
import { type JobEventType, type JobRecord, isTerminal } from "../../core/job.js";
import { type JobTransition, type MessageEffect, actionTransition, webhookDeliveriesOf } from "../../core/jobs/transitions.js";
import type { DeferredCreates } from "./deferred-creates.js";
import type { SqliteEventLog } from "./event-log.js";
import type { SqliteJobDependencies } from "./job-dependencies.js";
import { adoptedJobOf, toJob } from "../codecs/job-row.js";
import { jobChangeOf, jobInputIndex, jobInsertValues, jobRowOf } from "./job-rows.js";
import type { ReadyMessageRow } from "../codecs/message-row.js";
import type { JobStatements } from "./job-statements.js";
import type { RunningCounts } from "./running-counts.js";
import type { MessageContentCache } from "./message-content-cache.js";
import type { SqliteWebhookOutbox } from "./webhook-outbox-store.js";

/** The event a submit's job is logged with when its rows are written. */
export const submittedEvents: readonly JobEventType[] = ["job.queued"];

export class JobTransitionWriter {
  /** While applyActions runs: the seqs of the messages its jobs let go of, not deleted yet. */
  private deletesPending: number[] | undefined;

  constructor(
    private readonly sql: JobStatements,
    private readonly outbox: SqliteWebhookOutbox,
    private readonly eventLog: SqliteEventLog,
    private readonly dependencies: SqliteJobDependencies,
    private readonly deferredCreates: DeferredCreates,
    private readonly counts: RunningCounts,
    /** The SQS side's: a message sent through SQS and run as a job is forgotten when its job deletes it. */
    private readonly messageCache?: MessageContentCache,
  ) {}

  /** Inserts a job's row; a job with requires has its input kept in job_inputs (job-rows.ts: jobInputSql). */
  insertJobRow(job: Omit<JobRecord, "seq">): number {
    const values = jobInsertValues(job);
    const inputAside = job.requires !== undefined;
    if (inputAside) values[jobInputIndex] = "";
    const seq = Number(queueMustExist(job.queueName, () => this.sql.jobInsert.run(...values)).lastInsertRowid);
    if (inputAside) this.sql.jobInputInsert.run(seq, job.inputJson);
    this.counts.changed(undefined, job);
    return seq;
  }

  settingsOf(queueId: number): JobQueueSettings | undefined {
    const json = this.sql.settingsGet.get(queueId);
    return json ? (JSON.parse(json) as JobQueueSettings) : undefined;
  }

  /** A job by id (its row read as an array: job-rows.ts). */
  findJob(id: string): JobRecord | undefined {
    const values = this.sql.jobById.get(id);
    return values && toJob(jobRowOf(values));
  }

  /**
   * A job by id, a submit of this group not yet written included: for the writes that run beside
   * deferred submits (besideDeferred) and may name one — a replayed Idempotency-Key, an ack.
   * (Other writes run after they are written: the table has them.)
   */
  findJobOrDeferred(id: string): JobRecord | undefined {
    return this.findJob(id) ?? this.deferredCreates.job(id);
  }

  /**
   * Actions by id (a lease's acks, jobTransitionMany's), each as applyAction, their
   * messages deleted together before this returns (kept-counts.ts: a statement and a counts
   * UPDATE per 32 seqs, not per message).
   */
  applyActions(actions: readonly JobAction[], nowMs: number): JobActionResult[] {
    if (actions.length < 2) return actions.map((action) => this.applyAction(action, nowMs));
    const pending: number[] = [];
    this.deletesPending = pending;
    try {
      const results = actions.map((action) => this.applyAction(action, nowMs));
      this.sql.keptCounts.deleteSeqs(pending);
      return results;
    } finally {
      this.deletesPending = undefined;
    }
  }

  /** One action inside a write; a refusal (thrown by the transition, before any write) is its result. */
  private applyAction(action: JobAction, nowMs: number): JobActionResult {
    try {
      // A submit of this group not written yet is queued: an ack (the one action run beside it)
      // on it is refused before any write.
      const job = this.findJobOrDeferred(action.id);
      if (!job) fail("JobNotFound", `Job ${action.id} does not exist.`);
      return { ok: true, change: this.apply(actionTransition(job, action, nowMs), job, nowMs) };
    } catch (err) {
      if (err instanceof SluiceError) return { ok: false, error: { code: err.code, message: err.message } };
      throw err;
    }
  }

  /** The message's job; a message without one (sent through SQS, or its job pruned) is adopted as a new job. */
  jobForMessage(row: ReadyMessageRow, p: JobLeaseParams): JobRecord {
    const existing = this.findJob(row.message_id);
    if (existing) return existing;
    const adopted = adoptedJobOf(row, this.sql.messageBody.get(row.seq)!, p);
    return { ...adopted, seq: this.insertJobRow(adopted) };
  }

  /** Writes a transition decided from `before`, the job as this write read it. */
  apply(decided: JobTransition, before: JobRecord, nowMs: number): JobChange {
    const t = this.withLiveDeadLetterQueue(decided);
    const messageSeq = t.job.messageSeq;
    const job: JobRecord = t.message.kind === "delete" ? { ...t.job, messageSeq: undefined } : t.job;
    // A transition with no message effect and no event changed nothing (e.g. a repeated cancel).
    if (t.message.kind !== "none" || t.events.length > 0) {
      const change = jobChangeOf(before, job);
      if (change.mask !== 0) this.sql.jobUpdateOf(change.mask).run(...change.values);
      this.counts.changed(before, job);
    }
    if (messageSeq !== undefined) this.applyMessageEffect(t.message, messageSeq, nowMs, job);
    this.logEvents(job, t.events, nowMs);
    const followOn = isTerminal(job.status) ? this.releaseChildren(job, nowMs) : undefined;
    return followOn ? { job, events: t.events, followOn } : { job, events: t.events };
  }

  /**
   * A parent just finished: each of its waiting children is judged again by all its parents (core's
   * childOnParentDone) and queued, or ended like it — their own children in turn, in this write.
   * One index seek for a job nobody depends on.
   */
  private releaseChildren(parent: JobRecord, nowMs: number): JobChange[] | undefined {
    const childIds = this.dependencies.childrenOf(parent.id);
    if (childIds.length === 0) return undefined;
    const changes: JobChange[] = [];
    for (const childId of childIds) {
      const child = this.findJob(childId);
      if (!child || child.status !== "waiting") continue;
      const resultTtlSeconds = (this.settingsOf(child.queueId) ?? defaultJobQueueSettings).resultTtlSeconds;
      const t = childOnParentDone(child, (id) => (id === parent.id ? parent : this.findJob(id)), nowMs, resultTtlSeconds);
      if (t) changes.push(this.apply(t, child, nowMs));
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
  logEvents(job: JobRecord, events: readonly JobEventType[], nowMs: number): void {
    if (events.length === 0) return;
    const snapshot = eventSnapshotJson(job);
    const ids = events.map((event) => this.eventLog.appendOne(job, snapshot, event, nowMs));
    if (job.webhook) for (const delivery of webhookDeliveriesOf([{ job, events }], ids)) this.outbox.insert(delivery, nowMs);
  }

  /** `job`: the message's, if it has one (a dead-lettered job message gets its body back from it: kept-bodies.ts). */
  applyMessageEffect(effect: MessageEffect, seq: number, nowMs: number, job?: JobRecord): void {
    switch (effect.kind) {
      case "none":
        return;
      case "delete":
        // Inside applyActions: deleted with the other actions' messages, before it returns.
        if (this.deletesPending) this.deletesPending.push(seq);
        else this.sql.keptCounts.deleteSeqs([seq]);
        this.messageCache?.forget(seq);
        return;
      case "visibleAt":
        this.sql.messageVisibleAt.run(effect.visibleAtMs, seq);
        return;
      case "lease":
        this.sql.messageLease.run(effect.visibleUntilMs, nowMs, effect.receiptToken, seq);
        return;
      case "deadLetter":
        if (job !== undefined) this.sql.messageDeadLetterWithBody.run(effect.queueId, nowMs, effect.sourceQueueName, job.inputJson, seq);
        else this.sql.messageDeadLetter.run(effect.queueId, nowMs, effect.sourceQueueName, seq);
        return;
    }
  }
}

/** Runs a write that names queue `queueName`; its foreign key failure is the queue gone (core's queueGone). */
export function queueMustExist<T>(queueName: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if ((err as { code?: unknown }).code === "SQLITE_CONSTRAINT_FOREIGNKEY") queueGone(queueName);
    throw err;
  }
}
