/**
 * The jobs API in core: submit, get (and wait), list, cancel; the worker side (lease, heartbeat,
 * complete, fail); queue settings and stats; and the upkeep the maintenance loop runs (expired
 * leases and timeouts, pruning). A job queue is an ordinary queue of the QueueService: leases wait
 * on its waiters, so a submit wakes a long-polling worker at once. This class is the one public
 * face of the parts that do the work, each in a file of its own: job-submissions.ts,
 * job-leasing.ts, job-holds.ts, job-upkeep.ts (with the webhook outbox) and job-notices.ts.
 */
import type { Clock } from "../clock.js";
import { fail } from "../errors.js";
import type { IdSource } from "../ids.js";
import { limits } from "../limits.js";
import type { QueueRecord } from "../queue.js";
import type { QueueService } from "../queue-service.js";
import { publishJobChanges } from "../notifier.js";
import { JobEventFeed } from "./event-feed.js";
import { transitionJob } from "./job-actions.js";
import { JobEventHub } from "./job-events.js";
import { type WaitSignal, JobHolds } from "./job-holds.js";
import { type LeaseAckInput, type LeaseInput, type LeaseWithAcksResult, JobLeasing } from "./job-leasing.js";
import { type WorkerView, WorkerRegistry } from "./worker-registry.js";
import { jobMessage } from "./job-message.js";
import { JobNotices } from "./job-notices.js";
import { type JobQueueInfo, queueInfoOf } from "./job-queue-info.js";
import { type JobQueuePolicy, JobQueues } from "./job-queues.js";
import type { JobServiceShared, JobServiceStore } from "./job-service-shared.js";
import type { JobQueueSettingsPatch } from "../job-settings.js";
import { checkJobInteger } from "../job-settings.js";
import type { JobChange, JobCreateItem, JobCreateResult, WebhookDelivery } from "../job-store.js";
import { type KeyedSubmits, type SubmitResult, JobSubmissions } from "./job-submissions.js";
import { decodeCursor, encodeCursor } from "./job-tokens.js";
import { JobUpkeep } from "./job-upkeep.js";
import type { SubmitInput } from "./job-validation.js";
import { type JobError, type JobRecord, type JobStatus, type JobTrace, type LeasedJob, isTerminal } from "../job.js";
import { ParkedLeases } from "./parked-leases.js";
import type { BlobService } from "../blobs/blob-service.js";

export type { WaitSignal } from "./job-holds.js";
export type { LeaseAckInput, LeaseInput, LeaseWithAcksResult } from "./job-leasing.js";
export type { SubmitResult } from "./job-submissions.js";

export interface JobServiceDeps {
  store: JobServiceStore;
  queues: QueueService;
  clock: Clock;
  ids: IdSource;
  senderId: string;
  /** Uniform in [0, 1): backoff jitter. */
  random?: () => number;
  idempotencyKeyTtlSeconds?: number;
  /** How long the durable event log keeps events (GET /v1/events resumes within it). Default 24 h. */
  eventRetentionSeconds?: number;
  /** Failures of background reads (the event feed's) and writes (the workers list's); default: ignored. */
  onError?: (err: unknown) => void;
  /** This node, in the workers rows it writes (default: a random id). */
  nodeId?: string;
  /** Attachments' blobs (submit's attachments, complete's outputAttachments). */
  blobs?: BlobService;
}

export interface JobPage {
  jobs: JobRecord[];
  nextCursor?: string;
}

export type HeartbeatInput = { leaseId: string; leaseSeconds?: number; progress?: number };
export type HeartbeatResult = { cancelRequested: boolean; leaseExpiresAtMs: number; job: JobRecord };
export type FailInput = { leaseId: string; error: JobError; retryable?: boolean; retryAfterSeconds?: number };
export type OutputChunksPage = { attempt: number; chunksJson: string[]; next: number; done: boolean };
export type QueueInfoPageInput = { prefix?: string; limit?: number; afterName?: string };

export class JobService {
  readonly events = new JobEventHub();
  readonly jobQueues: JobQueues;
  /** Event streams' reader of the durable log (event-feed.ts). */
  readonly feed: JobEventFeed;
  private readonly store: JobServiceStore;
  private readonly queues: QueueService;
  private readonly clock: Clock;
  private readonly shared: JobServiceShared;
  private readonly submissions: JobSubmissions;
  private readonly leasing: JobLeasing;
  private readonly holds: JobHolds;
  private readonly upkeep: JobUpkeep;
  private readonly unsubscribe: () => void;
  private closed = false;

  constructor(deps: JobServiceDeps) {
    this.store = deps.store;
    this.queues = deps.queues;
    this.clock = deps.clock;
    this.feed = new JobEventFeed(deps.store, deps.onError);
    this.jobQueues = new JobQueues({ store: deps.store, queues: deps.queues, clock: deps.clock });
    this.shared = {
      store: deps.store,
      queues: deps.queues,
      clock: deps.clock,
      ids: deps.ids,
      senderId: deps.senderId,
      random: deps.random ?? Math.random,
      jobQueues: this.jobQueues,
      parked: new ParkedLeases(),
      workers: new WorkerRegistry(deps.store, deps.clock, deps.store.notifier, deps.nodeId ?? deps.ids.messageId(), deps.onError ?? (() => {})),
      publish: (change) => this.publish(change),
      get: (account, id) => this.get(account, id),
      isClosed: () => this.closed,
      blobs: deps.blobs,
    };
    this.submissions = new JobSubmissions(this.shared, (deps.idempotencyKeyTtlSeconds ?? limits.jobs.idempotencyKeyTtlDefaultSeconds) * 1000);
    this.leasing = new JobLeasing(this.shared);
    this.holds = new JobHolds(this.shared, this.events, this.submissions);
    this.upkeep = new JobUpkeep(this.shared, this.leasing, (deps.eventRetentionSeconds ?? limits.events.retentionDefaultSeconds) * 1000);
    this.unsubscribe = deps.store.notifier.subscribe(new JobNotices(this.shared, this.events, this.feed, this.leasing).onNotice);
  }

  /** Each account's handle, made once (forAccount runs on every request). */
  private readonly handles = new Map<string, AccountJobs>();

  /**
   * The jobs of one account ("" is the server's own: QueueRecord.account, JobRecord.account): its
   * queue names are that account's queues, and a job of any other account is not found
   * (JobNotFound); waits, streams, parked leases, limits and caches are this service's. What a
   * bearer token of that account works through. Every method here that resolves a queue name or
   * a job id takes its account first.
   */
  forAccount(account: string): AccountJobs {
    let handle = this.handles.get(account);
    if (!handle) this.handles.set(account, (handle = new AccountJobs(this, account)));
    return handle;
  }

  // ---- clients ----

  /** Create items for jobs built from a stored submit, one per idempotency key (a schedule's runs). */
  keyedItems(p: KeyedSubmits): Promise<JobCreateItem[]> {
    return this.submissions.keyedItems(p);
  }

  /** Wakes workers for, and tells of, the jobs keyedItems' items created once written. */
  announceCreated(results: readonly JobCreateResult[]): void {
    this.submissions.announceCreated(results);
  }

  /** `trace`: the submit's W3C trace context (traceContextOf), kept with the job for its workers. */
  async submit(account: string, queueName: string, input: SubmitInput, idempotencyKey?: string, trace?: JobTrace): Promise<SubmitResult> {
    return this.submissions.create(account, queueName, input, idempotencyKey, undefined, trace);
  }

  async get(account: string, id: string): Promise<JobRecord> {
    const job = await this.store.jobGet({ id });
    // Another account's job is answered as one that doesn't exist: nothing tells it is there.
    if (!job || (job.account ?? "") !== account) fail("JobNotFound", `Job ${id} does not exist.`);
    return job;
  }

  /** The job once it is terminal, or as it is after `waitSeconds` — woken by the transition itself. */
  wait(account: string, id: string, waitSeconds: number, signal?: WaitSignal): Promise<JobRecord> {
    return this.holds.wait(account, id, waitSeconds, signal);
  }

  /** Submit, then hold the answer until the job is terminal or `waitSeconds` pass (JobHolds.submitAndWait). */
  submitAndWait(account: string, queueName: string, input: SubmitInput, idempotencyKey: string | undefined, waitSeconds: number, signal?: WaitSignal, trace?: JobTrace): Promise<SubmitResult> {
    return this.holds.submitAndWait(account, queueName, input, idempotencyKey, waitSeconds, signal, trace);
  }

  async list(account: string, queueName: string, p: { status?: JobStatus; limit?: number; cursor?: string }): Promise<JobPage> {
    const queue = await this.jobQueues.get(account, queueName);
    const limit = p.limit ?? limits.jobs.listDefaultJobs;
    checkJobInteger("limit", limit, 1, limits.jobs.listMaxJobs);
    const beforeSeq = p.cursor === undefined ? undefined : decodeCursor(p.cursor);
    const rows = await this.store.jobList({ queueId: queue.id, status: p.status, beforeSeq, limit: limit + 1 });
    const jobs = rows.slice(0, limit);
    return { jobs, nextCursor: rows.length > limit ? encodeCursor(jobs[jobs.length - 1]!.seq) : undefined };
  }

  async cancel(account: string, id: string): Promise<JobRecord> {
    const job = await this.get(account, id);
    const policy = await this.jobQueues.policyByName(account, job.queueName);
    const change = await transitionJob(this.store, this.clock.nowMs(), { kind: "cancel", id, resultTtlSeconds: policy.settings.resultTtlSeconds });
    this.publish(change);
    return change.job;
  }

  /**
   * An operator's retry (dashboard, CLI): a failed or canceled job is queued again at once, its
   * attempts starting over, with a fresh message on its queue (JobNotRetryable otherwise).
   */
  async retry(account: string, id: string): Promise<JobRecord> {
    const job = await this.get(account, id);
    const policy = await this.jobQueues.policyByName(account, job.queueName);
    const nowMs = this.clock.nowMs();
    const message = jobMessage({ queue: policy.queue, jobId: id, inputJson: job.inputJson, priority: job.priority, availableAtMs: nowMs, senderId: this.shared.senderId });
    const change = await this.store.jobRetry({ id, nowMs, message });
    this.publish(change);
    this.queues.wakePollers(policy.queue.id, [{ visibleAtMs: nowMs }], change.job.requires !== undefined);
    return change.job;
  }

  /** Workers of this account seen in the last minute, on every node (GET /v1/workers). */
  listWorkers(account: string, limit = 1_000): Promise<WorkerView[]> {
    return this.shared.workers.list(account, limit);
  }

  /** Writes the workers seen on this node now, instead of within the second. */
  flushWorkers(): Promise<void> {
    return this.shared.workers.flush();
  }

  async webhookDeliveries(jobId: string): Promise<WebhookDelivery[]> {
    return this.store.webhookDeliveryList({ jobId });
  }

  // ---- workers (job-leasing.ts) ----

  /**
   * Leases up to `max` jobs, waiting up to `waitSeconds` for the first; with `batchWindowMs`, keeps
   * gathering for that long after the first one (never past the wait) so batch workers get full batches.
   */
  async lease(account: string, queueName: string, input: LeaseInput): Promise<LeasedJob[]> {
    return (await this.leasing.leaseWithAcks(account, queueName, input, [])).leased;
  }

  /** A lease that first reports finished jobs (complete / fail), all in the lease's first write (JobLeasing.leaseWithAcks). */
  leaseWithAcks(account: string, queueName: string, input: LeaseInput, ackInputs: LeaseAckInput[]): Promise<LeaseWithAcksResult> {
    return this.leasing.leaseWithAcks(account, queueName, input, ackInputs);
  }

  heartbeat(account: string, id: string, p: HeartbeatInput): Promise<HeartbeatResult> {
    return this.leasing.heartbeat(account, id, p);
  }

  /** Streamed output (POST /v1/jobs/{id}/output): `total` is the attempt's count of chunks after these. */
  output(account: string, id: string, p: { leaseId: string; chunks: unknown }): Promise<{ cancelRequested: boolean; total: number }> {
    return this.leasing.output(account, id, p);
  }

  /** The latest attempt's chunks from `from` (each a JSON text), and whether the job has ended. */
  async outputChunks(account: string, id: string, p: { from: number; limit: number }): Promise<OutputChunksPage> {
    const job = await this.get(account, id);
    const read = await this.store.jobOutputRead({ id, fromIndex: p.from, limit: p.limit });
    if (!read) fail("JobNotFound", `Job ${id} does not exist.`);
    const next = p.from + read.chunksJson.length;
    return { attempt: read.attempt, chunksJson: read.chunksJson, next, done: isTerminal(job.status) && next >= read.total };
  }

  complete(account: string, id: string, p: { leaseId: string; output?: unknown; outputAttachments?: Record<string, string> }): Promise<JobRecord> {
    return this.leasing.complete(account, id, p);
  }

  fail(account: string, id: string, p: FailInput): Promise<JobRecord> {
    return this.leasing.fail(account, id, p);
  }

  /** The worker hands back a lease it never started: queued again at once, the attempt given back. */
  release(account: string, id: string, p: { leaseId: string }): Promise<JobRecord> {
    return this.leasing.release(account, id, p);
  }

  // ---- queues ----

  async queueInfo(account: string, name: string): Promise<JobQueueInfo> {
    return this.infoOf(await this.jobQueues.policyByName(account, name));
  }

  /** A page of queues in name order, each with what queueInfo tells of it. */
  async listQueueInfos(account: string, p: QueueInfoPageInput): Promise<{ queues: JobQueueInfo[]; hasMore: boolean }> {
    const limit = p.limit ?? limits.admin.listQueuesDefaultPage;
    checkJobInteger("limit", limit, 1, limits.admin.listQueuesMaxPage);
    const page = await this.queues.listQueues(account, { prefix: p.prefix, afterName: p.afterName, maxResults: limit });
    const queues = await Promise.all(page.queues.map(async (queue) => this.infoOf(await this.jobQueues.policyOf(queue))));
    return { queues, hasMore: page.hasMore };
  }

  /** Changes a queue's job settings (creating the queue if missing) and, when `paused` is given, pauses or resumes it. */
  async updateQueueSettings(account: string, name: string, patch: JobQueueSettingsPatch, paused?: boolean): Promise<JobQueueInfo> {
    let policy = await this.jobQueues.updateSettings(account, name, patch);
    if (paused !== undefined && (policy.queue.config.paused === true) !== paused) {
      await this.queues.setPaused(account, name, paused);
      policy = await this.jobQueues.policyByName(account, name);
    }
    return this.infoOf(policy);
  }

  // ---- upkeep and the webhook outbox (job-upkeep.ts) ----

  /** Running jobs whose lease expired or whose attempt timed out: retried, failed or canceled. */
  expireLeases(batch?: number): Promise<number> {
    return this.upkeep.expireLeases(batch);
  }

  /** Deletes finished jobs past their queue's resultTtlSeconds, expired idempotency keys, and events past the log's retention. */
  prune(batch?: number): Promise<number> {
    return this.upkeep.prune(batch);
  }

  /** Deletes events older than the log's retention; answers how many. */
  pruneEvents(batch?: number): Promise<number> {
    return this.upkeep.pruneEvents(batch);
  }

  claimWebhookDeliveries(limit: number): Promise<WebhookDelivery[]> {
    return this.upkeep.claimWebhookDeliveries(limit);
  }

  nextWebhookDueAtMs(): Promise<number | undefined> {
    return this.upkeep.nextWebhookDueAtMs();
  }

  /** Records an attempt; says whether it was delivered, will be retried, or was given up (JobUpkeep). */
  recordWebhookAttempt(d: WebhookDelivery, outcome: Parameters<JobUpkeep["recordWebhookAttempt"]>[1]): Promise<"delivered" | "retrying" | "gaveUp"> {
    return this.upkeep.recordWebhookAttempt(d, outcome);
  }

  // ---- event streams ----

  /** Who is listening: held waits (the in-process hub) and event streams (the feed). */
  subscriberCount(): number {
    return this.events.listenerCount() + this.feed.size;
  }

  /** Whether the log holds events of the job after `afterId` (a resumed stream has something to send). */
  async hasEventsAfter(jobId: string, afterId: number): Promise<boolean> {
    return (await this.store.jobEventList({ afterId, jobId, limit: 1 })).length > 0;
  }

  /** Ends every `wait` at once (shutdown); leases end through the queue waiters. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    this.holds.releaseAll();
    this.shared.workers.stop();
  }

  // ---- internals ----

  /** Tells every node (Store.notifier) of a transition that committed. */
  private publish(change: JobChange): void {
    publishJobChanges(this.store.notifier, [change], this.clock.nowMs());
    // Throughput (queue-activity.ts), counted by the node that made the change: a job in is a
    // message sent, a job done a message completed.
    for (const type of change.events) {
      if (type === "job.queued" || type === "job.waiting") this.queues.activity.record(change.job.queueId, "sent", 1);
      else if (type === "job.succeeded" || type === "job.failed") this.queues.activity.record(change.job.queueId, "completed", 1);
    }
    if (change.followOn) this.wakeForReleased(change.followOn);
  }

  /** Children a parent's end queued (dependsOn): their messages are visible now, so workers of their queues are woken. */
  private wakeForReleased(changes: readonly JobChange[]): void {
    for (const c of changes) {
      if (c.job.status === "queued") this.queues.wakePollers(c.job.queueId, [{ visibleAtMs: c.job.availableAtMs ?? this.clock.nowMs() }], c.job.requires !== undefined);
      if (c.followOn) this.wakeForReleased(c.followOn);
    }
  }

  /**
   * Message counts by queueDepth, as /metrics reads them: dashboards and autoscalers poll this, and
   * an exact count would stall the server for seconds on a queue with a million messages.
   */
  private async infoOf(policy: JobQueuePolicy): Promise<JobQueueInfo> {
    const queue: QueueRecord = policy.queue;
    const deadLetterQueue = policy.deadLetter ? await this.queues.findQueue(queue.account, policy.deadLetter.name) : undefined;
    const [jobCounts, messages, deadLetterStats] = await Promise.all([
      this.store.jobCountByStatus({ queueId: queue.id }),
      this.queues.queueDepth(queue),
      deadLetterQueue ? this.queues.queueDepth(deadLetterQueue) : Promise.resolve(undefined),
    ]);
    return queueInfoOf({ policy, jobCounts, messages, deadLetterStats, throughput: this.queues.activity.throughput(queue.id), nowMs: this.clock.nowMs() });
  }
}

/**
 * One account's jobs (JobService.forAccount): queue names and job ids resolve there. Holds nothing
 * of its own but which account; what needs none (webhook deliveries, the event log) is the service's.
 */
export class AccountJobs {
  constructor(
    readonly service: JobService,
    readonly account: string,
  ) {}

  submit(queueName: string, input: SubmitInput, idempotencyKey?: string, trace?: JobTrace): Promise<SubmitResult> {
    return this.service.submit(this.account, queueName, input, idempotencyKey, trace);
  }

  get(id: string): Promise<JobRecord> {
    return this.service.get(this.account, id);
  }

  wait(id: string, waitSeconds: number, signal?: WaitSignal): Promise<JobRecord> {
    return this.service.wait(this.account, id, waitSeconds, signal);
  }

  submitAndWait(queueName: string, input: SubmitInput, idempotencyKey: string | undefined, waitSeconds: number, signal?: WaitSignal, trace?: JobTrace): Promise<SubmitResult> {
    return this.service.submitAndWait(this.account, queueName, input, idempotencyKey, waitSeconds, signal, trace);
  }

  list(queueName: string, p: { status?: JobStatus; limit?: number; cursor?: string }): Promise<JobPage> {
    return this.service.list(this.account, queueName, p);
  }

  cancel(id: string): Promise<JobRecord> {
    return this.service.cancel(this.account, id);
  }

  retry(id: string): Promise<JobRecord> {
    return this.service.retry(this.account, id);
  }

  listWorkers(limit?: number): Promise<WorkerView[]> {
    return this.service.listWorkers(this.account, limit);
  }

  lease(queueName: string, input: LeaseInput): Promise<LeasedJob[]> {
    return this.service.lease(this.account, queueName, input);
  }

  leaseWithAcks(queueName: string, input: LeaseInput, ackInputs: LeaseAckInput[]): Promise<LeaseWithAcksResult> {
    return this.service.leaseWithAcks(this.account, queueName, input, ackInputs);
  }

  heartbeat(id: string, p: HeartbeatInput): Promise<HeartbeatResult> {
    return this.service.heartbeat(this.account, id, p);
  }

  output(id: string, p: { leaseId: string; chunks: unknown }): Promise<{ cancelRequested: boolean; total: number }> {
    return this.service.output(this.account, id, p);
  }

  outputChunks(id: string, p: { from: number; limit: number }): Promise<OutputChunksPage> {
    return this.service.outputChunks(this.account, id, p);
  }

  complete(id: string, p: { leaseId: string; output?: unknown; outputAttachments?: Record<string, string> }): Promise<JobRecord> {
    return this.service.complete(this.account, id, p);
  }

  fail(id: string, p: FailInput): Promise<JobRecord> {
    return this.service.fail(this.account, id, p);
  }

  release(id: string, p: { leaseId: string }): Promise<JobRecord> {
    return this.service.release(this.account, id, p);
  }

  queueInfo(name: string): Promise<JobQueueInfo> {
    return this.service.queueInfo(this.account, name);
  }

  listQueueInfos(p: QueueInfoPageInput): Promise<{ queues: JobQueueInfo[]; hasMore: boolean }> {
    return this.service.listQueueInfos(this.account, p);
  }

  updateQueueSettings(name: string, patch: JobQueueSettingsPatch, paused?: boolean): Promise<JobQueueInfo> {
    return this.service.updateQueueSettings(this.account, name, patch, paused);
  }
}
