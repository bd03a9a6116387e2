/**
 * The SQLite store's lease: ready job messages of the table and the running group's submits not
 * yet written (deferred-creates.ts) merged in receive order, so a lease at the end of a group
 * takes the jobs submitted beside it as their rows are written, leased; on a queue with limits or
 * tenants, as many as the limits allow (limited-lease.ts).
 */
import type { JobLeaseParams, JobLeaseResult } from "../../core/job-store.js";
import type { JobEventType, JobRecord, LeasedJob } from "../../core/job.js";
import type { TenantsHeld } from "../../core/lease-limits.js";
import { leaseTransition } from "../../core/jobs/transitions.js";
import { type DeferredCreate, type DeferredCreates, comesBefore } from "./deferred-creates.js";
import type { ReadyMessageRow } from "../codecs/message-row.js";
import type { JobStatements } from "./job-statements.js";
import type { InsertedLease } from "./message-insert.js";
import { type JobTransitionWriter, submittedEvents } from "./job-transition-writer.js";
import type { SqliteLeaseLimits } from "./limited-lease.js";
import type { ServedClasses, SqliteRequirementClasses } from "./requirement-classes.js";
import { perPart } from "./visible-order.js";

export class LeaseMerge {
  constructor(
    private readonly sql: JobStatements,
    private readonly deferredCreates: DeferredCreates,
    private readonly writer: JobTransitionWriter,
    private readonly leaseLimits: SqliteLeaseLimits,
    private readonly classes: SqliteRequirementClasses,
  ) {}

  /**
   * Leases ready jobs in receive order into `r`, up to `p.max`: messages of the table and the
   * group's submits not yet written (deferred-creates.ts), merged. If it fails, the submits it
   * took are left to be written queued: their rows go with its savepoint.
   */
  leaseReady(p: JobLeaseParams, r: JobLeaseResult): void {
    const taken: DeferredCreate[] = [];
    // The requirement classes this worker's labels serve, besides jobs that require nothing.
    const classes = this.classes.servable(p);
    try {
      if (this.leaseLimits.applies(p)) this.leaseLimited(p, r, taken, classes);
      else this.leaseReadyMerged(p, r, taken, classes);
    } catch (err) {
      for (const entry of taken) entry.taken = false;
      throw err;
    }
  }

  /**
   * A lease on a queue with limits or tenants (limited-lease.ts): as many as the limits allow now,
   * tenants' jobs in fair order; `r.limited` says what held it back with jobs ready.
   */
  private leaseLimited(p: JobLeaseParams, r: JobLeaseResult, taken: DeferredCreate[], classes: ServedClasses): void {
    const before = r.leased.length;
    const lease = this.leaseLimits.begin(p, p.max - before);
    let tenants: TenantsHeld | undefined;
    if (lease.allowance.allowed > 0) {
      if (this.leaseLimits.hasTenants(p.queueId)) {
        const nextUngrouped = classes.keys.length === 0 ? undefined : () => this.classes.merge(p, classes, this.leaseLimits.readyUngrouped(p), 1)[0];
        tenants = this.leaseLimits.pickFair(
          p,
          lease.allowance.allowed,
          (row) => {
            const n = r.leased.length;
            this.leaseRow(row, p, r);
            return r.leased.length > n;
          },
          nextUngrouped,
        );
      } else {
        this.leaseReadyMerged({ ...p, max: before + lease.allowance.allowed }, r, taken, classes);
      }
    }
    const hold = this.leaseLimits.end(p.queueId, lease, r.leased.length - before, r.leased.length < p.max, tenants);
    if (hold) r.limited = hold;
  }

  private leaseReadyMerged(p: JobLeaseParams, r: JobLeaseResult, taken: DeferredCreate[], classes: ServedClasses): void {
    // Every job taken leaves the ready set (leased, deleted or dead-lettered), so this ends.
    while (r.leased.length < p.max) {
      const fromDeferred: DeferredLease[] = [];
      const wanted = p.max - r.leased.length;
      // The ten-priority ready query only if the table has anything visible (one seek says).
      const rows = this.sql.anyVisible.get(...perPart(p.queueId, p.nowMs)) === undefined ? [] : this.classes.merge(p, classes, this.sql.ready.all(p.queueId, p.nowMs, p.minSentAtMs, wanted), wanted);
      const fresh = this.deferredCreates.ready(p.queueId, p.nowMs, p.minSentAtMs, wanted);
      let i = 0;
      let j = 0;
      for (let n = 0; n < wanted && (i < rows.length || j < fresh.length); n++) {
        if (j < fresh.length && (i === rows.length || comesBefore(fresh[j]!, rows[i]!))) {
          const entry = fresh[j++]!;
          fromDeferred.push(this.leaseDeferred(entry, p, r));
          taken.push(entry);
        } else {
          this.leaseRow(rows[i++]!, p, r);
        }
      }
      this.writeDeferredLeases(p, fromDeferred);
      // A source that gave fewer than asked for and was used up is empty now (taking never adds).
      const tableEmpty = rows.length < wanted && i === rows.length;
      const deferredEmpty = fresh.length < wanted && j === fresh.length;
      if (tableEmpty && deferredEmpty) break;
    }
  }

  /** Leases one ready message of the table (or skips it, if its job is over). */
  private leaseRow(row: ReadyMessageRow, p: JobLeaseParams, r: JobLeaseResult): void {
    const job = this.writer.jobForMessage(row, p);
    const t = leaseTransition(job, p, row.seq);
    if ("skip" in t) {
      this.writer.applyMessageEffect(t.message, row.seq, p.nowMs, job);
      return;
    }
    const applied = this.writer.apply(t, job, p.nowMs);
    r.changes.push(applied);
    if (applied.job.status === "running") r.leased.push(applied.job as LeasedJob);
  }

  /**
   * Leases a submit of this group: the job running, its message in flight, in `r` at its place
   * in receive order. Its rows are written by writeDeferredLeases, with the pass's others.
   */
  private leaseDeferred(entry: DeferredCreate, p: JobLeaseParams, r: JobLeaseResult): DeferredLease {
    const t = leaseTransition(entry.job, p, 0);
    // A fresh job is queued: its lease is never skipped and always leaves it running.
    if ("skip" in t || t.message.kind !== "lease") throw new Error(`a submitted job ${entry.job.id} could not be leased`);
    entry.taken = true;
    // One copy of the record; its seq and messageSeq are filled in as its rows are written.
    const job = { ...t.job };
    r.changes.push({ job, events: t.events });
    r.leased.push(job as LeasedJob);
    return { entry, job, events: t.events, lease: { visibleUntilMs: t.message.visibleUntilMs, receiptToken: t.message.receiptToken, receivedAtMs: p.nowMs } };
  }

  /** Writes the rows of one pass's leased submits: their messages in one statement per 10, then each job and its events. */
  private writeDeferredLeases(p: JobLeaseParams, leases: readonly DeferredLease[]): void {
    if (leases.length === 0) return;
    const seqs = this.sql.messageInsert.leased(p.queueId, leases.map((l) => ({ message: l.entry.message, lease: l.lease })));
    leases.forEach(({ entry, job, events }, k) => {
      job.messageSeq = seqs[k]!;
      job.seq = this.writer.insertJobRow(job);
      entry.job.seq = job.seq;
      entry.job.messageSeq = job.messageSeq;
      this.writer.logEvents(entry.job, submittedEvents, entry.job.createdAtMs);
      this.writer.logEvents(job, events, p.nowMs);
    });
  }
}

/** A submit leased in this pass whose rows are not written yet (writeDeferredLeases). */
interface DeferredLease {
  entry: DeferredCreate;
  job: JobRecord;
  events: readonly JobEventType[];
  lease: InsertedLease;
}
