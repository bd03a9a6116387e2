/**
 * Notices from the store's notifier, whichever node's write they tell of: job changes reach this
 * node's event streams, held waits and limited leases; queue changes drop cached job policies and
 * end the waits of jobs a DeleteQueue took with it.
 */
import type { StoreNotice } from "../notifier.js";
import type { JobEventFeed } from "./event-feed.js";
import type { JobEventHub } from "./job-events.js";
import type { JobLeasing } from "./job-leasing.js";
import { type JobServiceShared, JobServicePart } from "./job-service-shared.js";
import type { JobEventType, JobRecord } from "../job.js";

export class JobNotices extends JobServicePart {
  /** Jobs whose record is being read for another node's notices, with the notices heard since (readAndPublish). */
  private readonly remoteNotices = new Map<string, Array<StoreNotice & { kind: "jobChanged" }>>();

  constructor(
    shared: JobServiceShared,
    private readonly events: JobEventHub,
    private readonly feed: JobEventFeed,
    private readonly leasing: Pick<JobLeasing, "limitedQueues" | "wakeLimited">,
  ) {
    super(shared);
  }

  /**
   * Job changes written through any node reach this node's event streams and held waits; a
   * purge or retention (the QueueService) ends jobs this way too.
   */
  readonly onNotice = (notice: StoreNotice): void => {
    if (notice.kind === "jobChanged") {
      // Events of it are in the log now: streams read them from there (nothing to do without streams).
      this.feed.poke();
      if (this.leasing.limitedQueues.size > 0 && notice.events.some((e) => slotFreeingEvents.has(e))) this.leasing.wakeLimited(notice.job?.queueId);
      if (notice.job) this.publishEvents(notice.job, notice.events, notice.atMs);
      // Told without the record (another process): read it, unless nobody here listens.
      else if (this.events.hasListeners(notice.jobId)) this.readAndPublish(notice);
    } else if (notice.kind === "queueChanged") {
      // Settings or dead-letter target may have changed (the record itself the QueueService drops).
      // A deleted queue's policy must go too: a lease on it would otherwise find the queue gone
      // and end at once with nothing, request after request — instead of answering QueueDeletedRecently.
      this.jobQueues.forgetQueue(notice.queueId);
      // A DeleteQueue deletes the queue's jobs in its write, with no transition and so no event:
      // held waits and job streams are told the jobs are gone, or they would sit to their limit.
      if (notice.deleted) this.events.jobsGone(notice.deleted.liveJobIds);
    }
  };

  private publishEvents(job: JobRecord, events: readonly JobEventType[], atMs: number): void {
    for (const type of events) this.events.publish({ type, atMs, job });
  }

  /**
   * Publishes the events of a notice that came without its record, read here. One read per job at
   * a time: notices heard while it runs wait for the next one, so a job's events go out in the
   * order their notices came (two reads in flight could finish out of order), each with a record
   * at least as new as its change.
   */
  private readAndPublish(notice: StoreNotice & { kind: "jobChanged" }): void {
    const queued = this.remoteNotices.get(notice.jobId);
    if (queued) {
      queued.push(notice);
      return;
    }
    this.remoteNotices.set(notice.jobId, [notice]);
    void (async () => {
      for (let batch = this.remoteNotices.get(notice.jobId)!; batch.length > 0; batch = this.remoteNotices.get(notice.jobId)!) {
        this.remoteNotices.set(notice.jobId, []);
        // A failed read loses these hints only: held waits still end at their limit.
        const job = await this.store.jobGet({ id: notice.jobId }).catch(() => undefined);
        if (job) for (const n of batch) this.publishEvents(job, n.events, n.atMs);
      }
      this.remoteNotices.delete(notice.jobId);
    })();
  }
}

/** Events after which a limited lease may start a job: a slot freed (the job left running), or a job became leasable. */
const slotFreeingEvents: ReadonlySet<JobEventType> = new Set(["job.succeeded", "job.failed", "job.canceled", "job.retrying", "job.queued"]);
