/**
 * The jobs API in core: submit, get (and wait), list, cancel; the worker side (lease, heartbeat,
 * complete, fail); queue settings and stats; and the upkeep the maintenance loop runs (expired
 * leases and timeouts, pruning). A job queue is an ordinary queue of the QueueService: leases wait
 * on its waiters, so a submit wakes a long-polling worker at once.
 */
import type { Clock } from "../clock.js";
import { fail, SluiceError } from "../errors.js";
import type { IdSource } from "../ids.js";
import { limits } from "../limits.js";
import type { QueueRecord } from "../queue.js";
import type { QueueService } from "../queue-service.js";
import type { Store } from "../store.js";
import { requestFingerprint } from "./idempotency.js";
import { JobEventHub } from "./job-events.js";
import { checkJobInput, jobMessage } from "./job-message.js";
import { type JobQueuePolicy, JobQueues } from "./job-queues.js";
import type { JobQueueSettingsPatch } from "./job-settings.js";
import { checkJobInteger, leaseLimitsOf } from "./job-settings.js";
import type { JobAck, JobChange, JobCreateItem, JobCreateResult, JobLeaseParams, JobLeaseResult, JobStore, RetryPolicy, WebhookDelivery } from "./job-store.js";
import { type StoreNotice, publishJobChanges } from "../notifier.js";
import { type SubmitInput, normalizeWebhook, validateJobError, validateProgress, validateSubmit } from "./job-validation.js";
import { type JobError, type JobEventType, type JobRecord, type JobWebhook, type JobStatus, type LeasedJob, isTerminal } from "./job.js";
import { decodeCursor, encodeCursor, leaseIdOf, queueIdOfLease } from "./job-tokens.js";
import { type JobQueueInfo, queueInfoOf } from "./job-queue-info.js";
import { ParkedLeases } from "./parked-leases.js";
import { newJobItem } from "./job-item.js";
import { scheduleRunKey } from "../schedules/due-runs.js";
import type { ScheduleJobOptions, ScheduleRecord } from "../schedules/schedule.js";
import type { ScheduleRunJobs } from "../schedules/schedule-service.js";
import { JobEventFeed } from "./event-feed.js";
import type { JobEventLog } from "./job-event-log.js";
import { nextWebhookAttemptAtMs, webhookRetry } from "./webhook-schedule.js";

export interface JobServiceDeps {
  store: JobStore & JobEventLog & Pick<Store, "queueGet" | "messageNextVisibleAt" | "notifier">;
  queues: QueueService;
  clock: Clock;
  ids: IdSource;
  senderId: string;
  /** For the ARN of an auto-created dead-letter queue. */
  region?: string;
  accountId?: string;
  /** Uniform in [0, 1): backoff jitter. */
  random?: () => number;
  idempotencyKeyTtlSeconds?: number;
  /** How long the durable event log keeps events (GET /v1/events resumes within it). Default 24 h. */
  eventRetentionSeconds?: number;
  /** Failures of background reads (the event feed's); default: ignored. */
  onError?: (err: unknown) => void;
}

/**
 * What a held request is ended early by (the client went away). An AbortSignal is one; the HTTP
 * layer passes a lighter object for submits, whose every held request would otherwise build one.
 */
export interface WaitSignal {
  readonly aborted: boolean;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

export interface SubmitResult {
  job: JobRecord;
  /** True when an Idempotency-Key matched an earlier submit with the same body. */
  replayed: boolean;
}

export interface LeaseInput {
  max?: number;
  waitSeconds?: number;
  leaseSeconds?: number;
  batchWindowMs?: number;
  signal?: AbortSignal;
}

/** A finished job's outcome, carried by a lease request. */
export type LeaseAckInput =
  | { kind: "complete"; id: string; leaseId: string; output?: unknown }
  | { kind: "fail"; id: string; leaseId: string; error: JobError; retryable?: boolean; retryAfterSeconds?: number };

export interface LeaseWithAcksResult {
  leased: LeasedJob[];
  /** One per ack, in order: the job it finished, or why it was refused (LeaseExpired, …). */
  acks: Array<{ id: string; ok: true; job: JobRecord } | { id: string; ok: false; error: { code: string; message: string } }>;
  /**
   * Leased jobs with dependsOn: their parents as they finished, in dependsOn order (their outputs
   * are what the handler works on). A parent pruned since is left out.
   */
  parents?: Map<string, JobRecord[]>;
}

/** An ack ready for the store, or refused before it (its job not found). */
type ResolvedAck = { id: string; ack: JobAck; policy: JobQueuePolicy } | { id: string; refused: { code: string; message: string } };
type JobLeaseResultAcks = Awaited<ReturnType<JobStore["jobLease"]>>["acks"];

export interface JobPage {
  jobs: JobRecord[];
  nextCursor?: string;
}

export class JobService {
  readonly events = new JobEventHub();
  readonly jobQueues: JobQueues;
  private readonly store: JobServiceDeps["store"];
  private readonly queues: QueueService;
  private readonly clock: Clock;
  private readonly ids: IdSource;
  private readonly random: () => number;
  private readonly idempotencyKeyTtlMs: number;
  private readonly pendingWaits = new Set<{ release: (() => void) | undefined }>();
  /** Long-polling leases a submit may run inside its own write (parked-leases.ts). */
  private readonly parked = new ParkedLeases();
  /** Jobs whose record is being read for another node's notices, with the notices heard since (readAndPublish). */
  private readonly remoteNotices = new Map<string, Array<StoreNotice & { kind: "jobChanged" }>>();
  private readonly unsubscribe: () => void;
  private closed = false;
  /** Leases waiting because their queue's limits held them back, by queue id (wakeLimited). */
  private readonly limitedQueues = new Map<number, number>();
  /** Event streams' reader of the durable log (event-feed.ts). */
  readonly feed: JobEventFeed;
  private readonly eventRetentionMs: number;

  constructor(private readonly deps: JobServiceDeps) {
    this.store = deps.store;
    this.queues = deps.queues;
    this.clock = deps.clock;
    this.ids = deps.ids;
    this.random = deps.random ?? Math.random;
    this.idempotencyKeyTtlMs = (deps.idempotencyKeyTtlSeconds ?? limits.jobs.idempotencyKeyTtlDefaultSeconds) * 1000;
    this.eventRetentionMs = (deps.eventRetentionSeconds ?? limits.events.retentionDefaultSeconds) * 1000;
    this.feed = new JobEventFeed(deps.store, deps.onError);
    this.jobQueues = new JobQueues({ store: deps.store, queues: deps.queues, clock: deps.clock, region: deps.region ?? "us-east-1", accountId: deps.accountId ?? "000000000000" });
    this.unsubscribe = deps.store.notifier.subscribe(this.onNotice);
  }

  /**
   * Job changes written through any node reach this node's event streams and held waits; a
   * purge or retention (the QueueService) ends jobs this way too.
   */
  private readonly onNotice = (notice: StoreNotice): void => {
    if (notice.kind === "jobChanged") {
      // Events of it are in the log now: streams read them from there (nothing to do without streams).
      this.feed.poke();
      if (this.limitedQueues.size > 0 && notice.events.some((e) => slotFreeingEvents.has(e))) this.wakeLimited(notice.job?.queueId);
      if (notice.job) this.publishEvents(notice.job, notice.events, notice.atMs);
      // Told without the record (another process): read it, unless nobody here listens.
      else if (this.events.hasListeners(notice.jobId)) this.readAndPublish(notice);
    } else if (notice.kind === "queueChanged") {
      // Settings or dead-letter target may have changed. A deleted queue's cached record must go
      // too: a lease on it would otherwise find the queue gone and end at once with nothing,
      // request after request, until the cache expired — instead of answering QueueDeletedRecently.
      this.jobQueues.forgetQueue(notice.queueId, notice.queueName);
      // A DeleteQueue deletes the queue's jobs in its write, with no transition and so no event:
      // held waits and job streams are told the jobs are gone, or they would sit to their limit.
      if (notice.deleted) this.events.jobsGone(notice.deleted.liveJobIds);
    }
  };

  // ---- clients ----

  async submit(queueName: string, input: SubmitInput, idempotencyKey?: string): Promise<SubmitResult> {
    return this.create(queueName, input, idempotencyKey, undefined);
  }

  /** `presetId`: submitAndWait subscribes to the job's events before the job exists. */
  private async create(queueName: string, input: SubmitInput, idempotencyKey: string | undefined, presetId: string | undefined): Promise<SubmitResult> {
    validateSubmit(input);
    const webhook = input.webhook ? normalizeWebhook(input.webhook) : undefined;
    const inputJson = JSON.stringify(input.input);
    checkJobInput(inputJson); // before the queue is created on first use: a refused submit creates nothing
    const first = await this.jobQueues.ensure(queueName);
    try {
      return await this.createOn(first, input, inputJson, webhook, idempotencyKey, presetId);
    } catch (err) {
      // The queue was deleted since it was cached (createOn forgot it): ensure() once more answers
      // QueueDeletedRecently, or creates it anew once that minute has passed.
      if (!(err instanceof SluiceError && err.code === "QueueNotFound")) throw err;
      return this.createOn(await this.jobQueues.ensure(queueName), input, inputJson, webhook, idempotencyKey, presetId);
    }
  }

  private async createOn(
    queue: QueueRecord,
    input: SubmitInput,
    inputJson: string,
    webhook: JobWebhook | undefined,
    idempotencyKey: string | undefined,
    presetId: string | undefined,
  ): Promise<SubmitResult> {
    const { settings } = await this.jobQueues.policyOf(queue);
    const retentionSeconds = queue.config.messageRetentionPeriodSeconds;
    if ((input.delaySeconds ?? 0) >= retentionSeconds) {
      fail("ValidationFailed", `delaySeconds ${input.delaySeconds} is not less than queue ${queue.name}'s message retention period (${retentionSeconds} s): the job would expire before it could run.`);
    }
    const nowMs = this.clock.nowMs();
    const id = presetId ?? this.ids.messageId();
    const fingerprint = idempotencyKey === undefined ? undefined : requestFingerprint(input);
    const idempotency = idempotencyKey === undefined ? undefined : { key: idempotencyKey, fingerprint: fingerprint!, expiresAtMs: nowMs + this.idempotencyKeyTtlMs };
    const item = newJobItem({ queue, settings, input, inputJson, webhook, id, nowMs, senderId: this.deps.senderId, idempotency });
    const availableAtMs = item.job.availableAtMs!;
    // A worker long-polling this queue gets its lease in this write: one commit and one sync. (Not
    // for a child: it may well wait for its parents, and the worker would be held for nothing.)
    const claimed = availableAtMs <= nowMs && input.dependsOn === undefined ? this.parked.claim(queue.id) : undefined;
    const written = await this.store.jobCreateMany({ items: [item], nowMs, handoff: claimed?.params(nowMs) }).catch((err: unknown) => {
      claimed?.deliver(undefined);
      this.jobQueues.forget(queue); // e.g. the queue was deleted since it was cached
      throw err;
    });
    const lease = written.handoff;
    claimed?.deliver(lease);
    const result = written.results[0]!;
    if (!result.created) {
      if (result.fingerprint !== fingerprint) {
        fail("IdempotencyKeyReused", `Idempotency-Key ${idempotencyKey} was already used on queue ${queue.name} with a different request body.`);
      }
      return { job: result.job, replayed: true };
    }
    // Unless the lease in this write took the job, someone else should come for it (once it is queued:
    // a child may be waiting for its parents, or ended already by a failed one).
    const taken = lease?.changes.find((c) => c.job.id === id)?.job;
    if (!taken && result.job.status === "queued") this.queues.wakePollers(queue.id, [{ visibleAtMs: availableAtMs }]);
    this.publish({ job: result.job, events: [submittedEventOf(result.job)], version: 1 });
    // Answered as it is after the write: already running when a waiting worker took it.
    return { job: taken ?? result.job, replayed: false };
  }

  /**
   * What a schedule's fire needs of the jobs layer (ScheduleRunJobs): each run's job built as a
   * submit of the schedule's input and options, keyed by schedule and run time; then, once the
   * fire committed, workers woken and the jobs told of like any submit's.
   */
  readonly scheduleRuns: ScheduleRunJobs = {
    itemsFor: async (schedule: ScheduleRecord, runs: readonly number[], nowMs: number): Promise<JobCreateItem[]> => {
      const queue = await this.jobQueues.ensure(schedule.queueName);
      const { settings } = await this.jobQueues.policyOf(queue);
      // Checked when the schedule was written (schedule-validation.ts); the webhook is normalized.
      const options = JSON.parse(schedule.optionsJson) as ScheduleJobOptions;
      const webhook = options.webhook as JobWebhook | undefined;
      return runs.map((runAtMs) => {
        const key = scheduleRunKey(schedule.name, runAtMs);
        const idempotency = { key, fingerprint: key, expiresAtMs: nowMs + this.idempotencyKeyTtlMs };
        return newJobItem({ queue, settings, input: options, inputJson: schedule.inputJson, webhook, id: this.ids.messageId(), nowMs, senderId: this.deps.senderId, idempotency });
      });
    },
    created: (results: readonly JobCreateResult[]): void => {
      for (const r of results) {
        if (!r.created) continue;
        this.queues.wakePollers(r.job.queueId, [{ visibleAtMs: r.job.availableAtMs ?? r.job.createdAtMs }]);
        this.publish({ job: r.job, events: [submittedEventOf(r.job)], version: 1 });
      }
    },
  };

  async get(id: string): Promise<JobRecord> {
    const job = await this.store.jobGet({ id });
    if (!job) fail("JobNotFound", `Job ${id} does not exist.`);
    return job;
  }

  /** The job once it is terminal, or as it is after `waitSeconds` — woken by the transition itself. */
  async wait(id: string, waitSeconds: number, signal?: WaitSignal): Promise<JobRecord> {
    checkJobInteger("wait", waitSeconds, 0, limits.jobs.getWaitMaxSeconds);
    if (waitSeconds === 0 || this.closed) return this.get(id);
    return (await this.hold(id, waitSeconds, signal, () => this.get(id)))!;
  }

  /**
   * Submit, then hold the answer until the job is terminal or `waitSeconds` pass (Replicate's
   * `Prefer: wait`): a caller that wants the result gets it in one request. The submit's own
   * result is the job's first state, so the hold costs no store read unless it times out.
   */
  async submitAndWait(queueName: string, input: SubmitInput, idempotencyKey: string | undefined, waitSeconds: number, signal?: WaitSignal): Promise<SubmitResult> {
    // Checked first: a bad wait must not submit anything.
    checkJobInteger("wait", waitSeconds, 0, limits.jobs.getWaitMaxSeconds);
    if (waitSeconds === 0 || this.closed) return this.submit(queueName, input, idempotencyKey);
    let submitted: SubmitResult | undefined;
    const job = await this.hold(this.ids.messageId(), waitSeconds, signal, async (id) => {
      submitted = await this.create(queueName, input, idempotencyKey, id);
      // A replay names an earlier job, whose events this hold didn't subscribe to: wait on it afresh.
      return submitted.replayed ? undefined : submitted.job;
    });
    if (submitted!.replayed) return { job: await this.wait(submitted!.job.id, waitSeconds, signal), replayed: true };
    return { job: job!, replayed: false };
  }

  /**
   * Subscribes to the job's events, then takes its current state from `current` (a read, or the
   * write that created it), so a transition in between can't be missed; then waits for a
   * terminal event, the time limit, `signal`, close(), or the job's deletion with its queue
   * (answered as the limit is: by a read, which then finds no job: JobNotFound). `current`
   * answering undefined ends the hold at once (the caller handles it).
   */
  private async hold(id: string, waitSeconds: number, signal: WaitSignal | undefined, current: (id: string) => Promise<JobRecord | undefined>): Promise<JobRecord | undefined> {
    let wake!: (job: JobRecord | undefined) => void;
    const woken = new Promise<JobRecord | undefined>((resolve) => (wake = resolve));
    const release = (): void => wake(undefined);
    const unsubscribe = this.events.subscribe(
      { jobId: id },
      (event) => {
        if (isTerminal(event.job.status)) wake(event.job);
      },
      release,
    );
    let timer: { cancel(): void } | undefined;
    const pending = { release: release as (() => void) | undefined };
    try {
      const job = await current(id);
      if (job === undefined || isTerminal(job.status)) return job;
      timer = this.clock.setTimer(waitSeconds * 1000, release);
      signal?.addEventListener("abort", release, { once: true });
      this.pendingWaits.add(pending);
      if (signal?.aborted || this.closed) release();
      return (await woken) ?? (await this.get(id));
    } finally {
      unsubscribe();
      timer?.cancel();
      signal?.removeEventListener("abort", release);
      this.pendingWaits.delete(pending);
      pending.release = undefined;
    }
  }

  async list(queueName: string, p: { status?: JobStatus; limit?: number; cursor?: string }): Promise<JobPage> {
    const queue = await this.jobQueues.get(queueName);
    const limit = p.limit ?? limits.jobs.listDefaultJobs;
    checkJobInteger("limit", limit, 1, limits.jobs.listMaxJobs);
    const beforeSeq = p.cursor === undefined ? undefined : decodeCursor(p.cursor);
    const rows = await this.store.jobList({ queueId: queue.id, status: p.status, beforeSeq, limit: limit + 1 });
    const jobs = rows.slice(0, limit);
    return { jobs, nextCursor: rows.length > limit ? encodeCursor(jobs[jobs.length - 1]!.seq) : undefined };
  }

  async cancel(id: string): Promise<JobRecord> {
    const job = await this.get(id);
    const policy = await this.jobQueues.policyByName(job.queueName);
    const change = await this.store.jobCancel({ id, nowMs: this.clock.nowMs(), resultTtlSeconds: policy.settings.resultTtlSeconds });
    this.publish(change);
    return change.job;
  }

  /**
   * An operator's retry (dashboard, CLI): a failed or canceled job is queued again at once, its
   * attempts starting over, with a fresh message on its queue (JobNotRetryable otherwise).
   */
  async retry(id: string): Promise<JobRecord> {
    const job = await this.get(id);
    const policy = await this.jobQueues.policyByName(job.queueName);
    const nowMs = this.clock.nowMs();
    const message = jobMessage({ queue: policy.queue, jobId: id, inputJson: job.inputJson, priority: job.priority, nowMs, availableAtMs: nowMs, senderId: this.deps.senderId });
    const change = await this.store.jobRetry({ id, nowMs, message });
    this.publish(change);
    this.queues.wakePollers(policy.queue.id, [{ visibleAtMs: nowMs }]);
    return change.job;
  }

  async webhookDeliveries(jobId: string): Promise<WebhookDelivery[]> {
    return this.store.webhookDeliveryList({ jobId });
  }

  // ---- workers ----

  /**
   * Leases up to `max` jobs, waiting up to `waitSeconds` for the first; with `batchWindowMs`, keeps
   * gathering for that long after the first one (never past the wait) so batch workers get full batches.
   */
  async lease(queueName: string, input: LeaseInput): Promise<LeasedJob[]> {
    return (await this.leaseWithAcks(queueName, input, [])).leased;
  }

  /**
   * A lease that first reports finished jobs (complete / fail), all in the lease's first write:
   * one request and one commit where a worker would otherwise make two. Each ack succeeds or fails
   * on its own; a malformed one refuses the whole request before anything is written. With acks
   * the lease never waits (waitSeconds and batchWindowMs count as 0), so their confirmation is
   * never held back by a long poll, and `max` may be 0 (acks only).
   */
  async leaseWithAcks(queueName: string, input: LeaseInput, ackInputs: LeaseAckInput[]): Promise<LeaseWithAcksResult> {
    const result = await this.leaseOrWait(queueName, input, ackInputs);
    if (!result.leased.some((job) => job.dependsOn !== undefined)) return result;
    const parents = new Map<string, JobRecord[]>();
    await Promise.all(
      result.leased.map(async (job) => {
        if (job.dependsOn === undefined) return;
        const found = await Promise.all(job.dependsOn.map((id) => this.store.jobGet({ id })));
        parents.set(job.id, found.filter((p): p is JobRecord => p !== undefined));
      }),
    );
    return { ...result, parents };
  }

  private async leaseOrWait(queueName: string, input: LeaseInput, ackInputs: LeaseAckInput[]): Promise<LeaseWithAcksResult> {
    const j = limits.jobs;
    const hasAcks = ackInputs.length > 0;
    const max = input.max ?? 1;
    checkJobInteger("max", max, hasAcks ? 0 : 1, j.leaseMaxJobs);
    const waitSeconds = input.waitSeconds ?? 0;
    checkJobInteger("waitSeconds", waitSeconds, 0, j.leaseWaitMaxSeconds);
    const batchWindowMs = input.batchWindowMs ?? 0;
    checkJobInteger("batchWindowMs", batchWindowMs, 0, j.batchWindowMaxMs);
    if (ackInputs.length > j.leaseMaxAcks) fail("ValidationFailed", `At most ${j.leaseMaxAcks} complete and fail entries in all; got ${ackInputs.length}.`);
    const checked = ackInputs.map((a) => this.checkAck(a));
    const queue = await this.jobQueues.ensure(queueName);
    const policy = await this.jobQueues.policyOf(queue);
    const leaseSeconds = input.leaseSeconds ?? policy.settings.leaseSeconds;
    checkJobInteger("leaseSeconds", leaseSeconds, 1, limits.visibilityTimeoutMaxSeconds);
    const acks = await this.resolveAcks(checked);
    const deadlineMs = this.clock.nowMs() + (hasAcks ? 0 : waitSeconds * 1000);
    let windowEndMs: number | undefined;
    const leased: LeasedJob[] = [];
    let ackResults: LeaseWithAcksResult["acks"] = [];
    const leaseParams = (nowMs: number, wanted: number): JobLeaseParams => ({
      ...this.retryPolicy(policy),
      queueId: queue.id,
      queueName: queue.name,
      max: wanted,
      nowMs,
      leaseSeconds,
      minSentAtMs: nowMs - queue.config.messageRetentionPeriodSeconds * 1000,
      leaseToken: leaseIdOf(queue.id, this.ids.receiptToken()),
      adopt: { maxAttempts: policy.settings.maxAttempts, timeoutSeconds: policy.settings.timeoutSeconds },
      limits: leaseLimits,
    });
    const leaseLimits = leaseLimitsOf(policy.settings);
    /** A lease result (already on disk) joins this answer, and what it changed is told. */
    const take = (result: JobLeaseResult): void => {
      for (const change of result.changes) this.publish(change);
      this.notifyDeadLettered(policy, result.changes);
      leased.push(...result.leased);
    };
    for (;;) {
      const version = this.queues.waiters.version(queue.id);
      const nowMs = this.clock.nowMs();
      const pendingAcks = ackResults.length === 0 && hasAcks ? acks : undefined;
      const result = await this.store.jobLease({
        ...leaseParams(nowMs, max - leased.length),
        ...(pendingAcks ? { acks: pendingAcks.flatMap((a) => ("ack" in a ? [a.ack] : [])) } : {}),
      });
      if (pendingAcks) ackResults = this.settleAcks(pendingAcks, result.acks);
      take(result);
      if (leased.length >= max) {
        // A full lease suggests more are waiting: pass the wake-up on to the next poller.
        if (max > 0) this.queues.waiters.notify(queue.id, 1);
        return { leased, acks: ackResults };
      }
      if (leased.length > 0) {
        if (batchWindowMs === 0 || hasAcks) return { leased, acks: ackResults };
        windowEndMs ??= nowMs + batchWindowMs;
      }
      const untilMs = Math.min(deadlineMs, windowEndMs ?? deadlineMs);
      const remainingMs = untilMs - this.clock.nowMs();
      if (remainingMs <= 0 || input.signal?.aborted || this.queues.waiters.isClosed || this.closed || this.queues.waiters.isGone(queue.id)) return { leased, acks: ackResults };
      if (result.limited) {
        // Held back by the queue's limits with jobs ready: a long poll still, woken when a running
        // job of the queue ends (a slot frees), a job comes, or the next token is due — never
        // parked for a submit's handoff, which the same limit would hold back.
        const retryInMs = result.limited.retryAtMs === undefined ? remainingMs : Math.max(1, result.limited.retryAtMs - this.clock.nowMs());
        this.limitedQueues.set(queue.id, (this.limitedQueues.get(queue.id) ?? 0) + 1);
        try {
          await this.queues.waiters.wait(queue.id, version, Math.min(remainingMs, retryInMs), max - leased.length, input.signal);
        } finally {
          const n = this.limitedQueues.get(queue.id)! - 1;
          if (n === 0) this.limitedQueues.delete(queue.id);
          else this.limitedQueues.set(queue.id, n);
        }
        if (input.signal?.aborted) return { leased, acks: ackResults };
        continue;
      }
      const nextVisibleAt = await this.store.messageNextVisibleAt({ queueId: queue.id, nowMs });
      const untilNextMs = nextVisibleAt === undefined ? remainingMs : Math.max(1, nextVisibleAt - this.clock.nowMs());
      const waitMs = Math.min(remainingMs, untilNextMs);
      // Waiting for a first job (no window to gather in): a submit may run this lease in its own write.
      if (leased.length > 0 || batchWindowMs > 0) {
        await this.queues.waiters.wait(queue.id, version, waitMs, max - leased.length, input.signal);
        if (input.signal?.aborted) return { leased, acks: ackResults };
        continue;
      }
      const parked = this.parked.park(queue.id, (at) => leaseParams(at, max), input.signal);
      try {
        await this.queues.waiters.wait(queue.id, version, waitMs, max, parked.signal);
      } finally {
        parked.unpark();
      }
      const handoff = parked.handoff();
      // Its client left: leasing now would hold jobs for a lease length, answered to nobody.
      if (handoff === undefined && input.signal?.aborted) return { leased, acks: ackResults };
      if (handoff === undefined) continue;
      // Taken by a submit: its write leased for us and is on disk once this resolves.
      const handed = await handoff;
      if (handed === undefined) continue;
      take(handed);
      // Its client left while the submit's write ran: the jobs go back to the queue at once
      // rather than sit leased to nobody until the lease expires.
      if (input.signal?.aborted) {
        await this.giveBack(leased, policy);
        return { leased: [], acks: ackResults };
      }
      if (leased.length > 0) return { leased, acks: ackResults };
    }
  }

  /** Validates an ack as the complete / fail routes do: a bad one refuses the whole request. */
  private checkAck(a: LeaseAckInput): { input: LeaseAckInput; outputJson?: string; error?: JobError } {
    if (a.kind === "complete") return { input: a, outputJson: this.checkOutput(a.output) };
    if (a.retryAfterSeconds !== undefined) checkJobInteger("retryAfterSeconds", a.retryAfterSeconds, 0, limits.jobs.retryDelayMaxSeconds);
    return { input: a, error: validateJobError(a.error) };
  }

  /** Each ack's queue policy (from its lease id); an ack whose job can't be found is refused alone. */
  private async resolveAcks(checked: Array<{ input: LeaseAckInput; outputJson?: string; error?: JobError }>): Promise<ResolvedAck[]> {
    return Promise.all(
      checked.map(async ({ input, outputJson, error }): Promise<ResolvedAck> => {
        let policy: JobQueuePolicy;
        try {
          policy = await this.policyForLease(input.id, input.leaseId);
        } catch (err) {
          if (err instanceof SluiceError) return { id: input.id, refused: { code: err.code, message: err.message } };
          throw err;
        }
        const base = { id: input.id, leaseToken: input.leaseId };
        const ack: JobAck =
          input.kind === "complete"
            ? { kind: "complete", ...base, outputJson: outputJson!, resultTtlSeconds: policy.settings.resultTtlSeconds }
            : { kind: "fail", ...base, ...this.retryPolicy(policy), error: error!, retryable: input.retryable ?? true, retryAfterSeconds: input.retryAfterSeconds };
        return { id: input.id, ack, policy };
      }),
    );
  }

  /** Publishes what the applied acks changed and pairs every ack with its answer. */
  private settleAcks(acks: ResolvedAck[], results: JobLeaseResultAcks): LeaseWithAcksResult["acks"] {
    let next = 0;
    return acks.map((a) => {
      if (!("ack" in a)) return { id: a.id, ok: false, error: a.refused };
      const r = results[next++]!;
      if (!r.ok) return { id: a.id, ok: false, error: r.error };
      this.publish(r.change);
      if (a.ack.kind === "fail") this.afterAttemptEnded(a.policy, r.change);
      return { id: a.id, ok: true, job: r.change.job };
    });
  }

  async heartbeat(id: string, p: { leaseId: string; leaseSeconds?: number; progress?: number }): Promise<{ cancelRequested: boolean; leaseExpiresAtMs: number; job: JobRecord }> {
    if (p.leaseSeconds !== undefined) checkJobInteger("leaseSeconds", p.leaseSeconds, 1, limits.visibilityTimeoutMaxSeconds);
    validateProgress(p.progress);
    const change = await this.store.jobHeartbeat({ id, leaseToken: p.leaseId, nowMs: this.clock.nowMs(), leaseSeconds: p.leaseSeconds, progress: p.progress });
    this.publish(change);
    return { cancelRequested: change.job.cancelRequested, leaseExpiresAtMs: change.job.leaseExpiresAtMs!, job: change.job };
  }

  async complete(id: string, p: { leaseId: string; output?: unknown }): Promise<JobRecord> {
    const outputJson = this.checkOutput(p.output);
    const policy = await this.policyForLease(id, p.leaseId);
    const change = await this.store.jobComplete({ id, leaseToken: p.leaseId, nowMs: this.clock.nowMs(), outputJson, resultTtlSeconds: policy.settings.resultTtlSeconds });
    this.publish(change);
    return change.job;
  }

  async fail(id: string, p: { leaseId: string; error: JobError; retryable?: boolean; retryAfterSeconds?: number }): Promise<JobRecord> {
    const error = validateJobError(p.error);
    if (p.retryAfterSeconds !== undefined) checkJobInteger("retryAfterSeconds", p.retryAfterSeconds, 0, limits.jobs.retryDelayMaxSeconds);
    const policy = await this.policyForLease(id, p.leaseId);
    const change = await this.store.jobFail({
      ...this.retryPolicy(policy),
      id,
      leaseToken: p.leaseId,
      nowMs: this.clock.nowMs(),
      error,
      retryable: p.retryable ?? true,
      retryAfterSeconds: p.retryAfterSeconds,
    });
    this.publish(change);
    this.afterAttemptEnded(policy, change);
    return change.job;
  }

  /** The worker hands back a lease it never started: queued again at once, the attempt given back. */
  async release(id: string, p: { leaseId: string }): Promise<JobRecord> {
    const policy = await this.policyForLease(id, p.leaseId);
    const change = await this.store.jobRelease({ id, leaseToken: p.leaseId, nowMs: this.clock.nowMs(), resultTtlSeconds: policy.settings.resultTtlSeconds });
    this.publish(change);
    this.afterAttemptEnded(policy, change);
    return change.job;
  }

  // ---- queues ----

  async queueInfo(name: string): Promise<JobQueueInfo> {
    return this.infoOf(await this.jobQueues.policyByName(name));
  }

  /** A page of queues in name order, each with what queueInfo tells of it. */
  async listQueueInfos(p: { prefix?: string; limit?: number; afterName?: string }): Promise<{ queues: JobQueueInfo[]; hasMore: boolean }> {
    const limit = p.limit ?? limits.admin.listQueuesDefaultPage;
    checkJobInteger("limit", limit, 1, limits.admin.listQueuesMaxPage);
    const page = await this.queues.listQueues({ prefix: p.prefix, afterName: p.afterName, maxResults: limit });
    const queues = await Promise.all(page.queues.map(async (queue) => this.infoOf(await this.jobQueues.policyOf(queue))));
    return { queues, hasMore: page.hasMore };
  }

  async updateQueueSettings(name: string, patch: JobQueueSettingsPatch): Promise<JobQueueInfo> {
    return this.infoOf(await this.jobQueues.updateSettings(name, patch));
  }

  // ---- upkeep (the maintenance loop) ----

  /** Running jobs whose lease expired or whose attempt timed out: retried, failed or canceled. */
  async expireLeases(batch = 100): Promise<number> {
    let total = 0;
    for (;;) {
      const nowMs = this.clock.nowMs();
      const due = await this.store.jobListExpired({ nowMs, limit: batch });
      await Promise.all(
        due.map(async ({ id, queueName }) => {
          const policy = await this.jobQueues.policyByName(queueName).catch((err: unknown) => {
            if (err instanceof SluiceError && err.code === "QueueNotFound") return undefined;
            throw err;
          });
          if (!policy) return;
          const change = await this.store.jobExpire({ ...this.retryPolicy(policy), id, nowMs });
          if (!change) return;
          this.publish(change);
          this.afterAttemptEnded(policy, change);
        }),
      );
      total += due.length;
      if (due.length < batch || this.closed) return total;
    }
  }

  /** Deletes finished jobs past their queue's resultTtlSeconds, and expired idempotency keys. */
  async prune(batch = 1_000): Promise<number> {
    let total = 0;
    for (;;) {
      const { jobs, idempotencyKeys } = await this.store.jobPrune({ nowMs: this.clock.nowMs(), limit: batch });
      total += jobs;
      if ((jobs < batch && idempotencyKeys < batch) || this.closed) break;
    }
    await this.pruneEvents();
    return total;
  }

  /** Who is listening: held waits (the in-process hub) and event streams (the feed). */
  subscriberCount(): number {
    return this.events.listenerCount() + this.feed.size;
  }

  /** Whether the log holds events of the job after `afterId` (a resumed stream has something to send). */
  async hasEventsAfter(jobId: string, afterId: number): Promise<boolean> {
    return (await this.store.jobEventList({ afterId, jobId, limit: 1 })).length > 0;
  }

  /** Deletes events older than the log's retention; answers how many. */
  async pruneEvents(batch = 10_000): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.store.jobEventPrune({ beforeAtMs: this.clock.nowMs() - this.eventRetentionMs, limit: batch });
      total += n;
      if (n < batch || this.closed) return total;
    }
  }

  // ---- the webhook outbox (delivered by the HTTP layer's dispatcher) ----

  async claimWebhookDeliveries(limit: number): Promise<WebhookDelivery[]> {
    return this.store.webhookDeliveryClaim({ nowMs: this.clock.nowMs(), limit, claimMs: webhookRetry.claimMs });
  }

  async nextWebhookDueAtMs(): Promise<number | undefined> {
    return this.store.webhookDeliveryNextDueAt();
  }

  /**
   * Records an attempt; a failed one is retried on core's schedule (no sooner than the receiver's
   * `retryAfterMs`), or given up after 72 h — or at once when `final` (410 Gone). Returns which.
   */
  async recordWebhookAttempt(
    d: WebhookDelivery,
    outcome: { delivered: boolean; statusCode?: number; error?: string; retryAfterMs?: number; final?: boolean },
  ): Promise<"delivered" | "retrying" | "gaveUp"> {
    const nowMs = this.clock.nowMs();
    const { retryAfterMs, final, ...attempt } = outcome;
    const nextAttemptAtMs =
      outcome.delivered || final ? undefined : nextWebhookAttemptAtMs({ attempts: d.attempts + 1, createdAtMs: d.createdAtMs, nowMs, random: this.random(), retryAfterMs });
    await this.store.webhookDeliveryRecord({ id: d.id, nowMs, ...attempt, nextAttemptAtMs });
    if (outcome.delivered) return "delivered";
    return nextAttemptAtMs === undefined ? "gaveUp" : "retrying";
  }

  /** Ends every `wait` at once (shutdown); leases end through the queue waiters. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    for (const pending of [...this.pendingWaits]) pending.release?.();
  }

  // ---- internals ----

  private checkOutput(output: unknown): string {
    const outputJson = JSON.stringify(output === undefined ? null : output);
    const size = Buffer.byteLength(outputJson, "utf8");
    if (size > limits.messageSizeMaxBytes) fail("MessageTooLong", `The output is ${size} bytes of JSON; at most ${limits.messageSizeMaxBytes} are kept.`);
    return outputJson;
  }

  /** Tells every node (Store.notifier) of a transition that committed. */
  private publish(change: JobChange): void {
    publishJobChanges(this.store.notifier, [change], this.clock.nowMs());
    // Throughput (queue-activity.ts), counted by the node that made the change: a job in is a
    // message sent, a job done a message completed.
    for (const type of change.events) {
      if (type === "job.queued" || type === "job.waiting") this.queues.activity.record(change.job.queueName, "sent", 1);
      else if (type === "job.succeeded" || type === "job.failed") this.queues.activity.record(change.job.queueName, "completed", 1);
    }
    if (change.followOn) this.wakeForReleased(change.followOn);
  }

  /**
   * A job left running (or another came): leases held back by their queue's limits try again.
   * Without the job's queue (a notice from another node that left the record out), every such queue's.
   */
  private wakeLimited(queueId: number | undefined): void {
    for (const [id, waiting] of this.limitedQueues) if (queueId === undefined || id === queueId) this.queues.waiters.notify(id, waiting);
  }

  /** Children a parent's end queued (dependsOn): their messages are visible now, so workers of their queues are woken. */
  private wakeForReleased(changes: readonly JobChange[]): void {
    for (const c of changes) {
      if (c.job.status === "queued") this.queues.wakePollers(c.job.queueId, [{ visibleAtMs: c.job.availableAtMs ?? this.clock.nowMs() }]);
      if (c.followOn) this.wakeForReleased(c.followOn);
    }
  }

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

  /** Leases handed to a request that is gone: each released (attempt given back), best effort — its lease expiring is the fallback. */
  private async giveBack(leased: readonly LeasedJob[], policy: JobQueuePolicy): Promise<void> {
    const nowMs = this.clock.nowMs();
    await Promise.all(
      leased.map(async (job) => {
        const change = await this.store
          .jobRelease({ id: job.id, leaseToken: job.leaseToken, nowMs, resultTtlSeconds: policy.settings.resultTtlSeconds })
          .catch(() => undefined);
        if (!change) return;
        this.publish(change);
        this.afterAttemptEnded(policy, change);
      }),
    );
  }

  private retryPolicy(policy: JobQueuePolicy): RetryPolicy {
    return {
      backoff: policy.settings.backoff,
      random: this.random(),
      deadLetterQueueId: policy.deadLetter?.queueId,
      deadLetterSourceQueueName: policy.queue.name,
      resultTtlSeconds: policy.settings.resultTtlSeconds,
    };
  }

  /** The queue's policy from the lease id's queue, or through the job when that isn't cached. */
  private async policyForLease(id: string, leaseId: string): Promise<JobQueuePolicy> {
    const queueId = queueIdOfLease(leaseId);
    const cached = queueId === undefined ? undefined : await this.jobQueues.policyById(queueId);
    if (cached) return cached;
    const job = await this.get(id);
    return this.jobQueues.policyByName(job.queueName);
  }

  /** A retried job's message became visible (now or later); a failed one's went to the dead-letter queue. */
  private afterAttemptEnded(policy: JobQueuePolicy, change: JobChange): void {
    // Retried: its message is visible again now, or after the backoff.
    if (change.job.status === "queued") this.queues.wakePollers(policy.queue.id, [{ visibleAtMs: change.job.availableAtMs ?? this.clock.nowMs() }]);
    this.notifyDeadLettered(policy, [change]);
  }

  private notifyDeadLettered(policy: JobQueuePolicy, changes: JobChange[]): void {
    const moved = changes.filter((c) => c.job.status === "failed").length;
    if (moved > 0 && policy.deadLetter) this.queues.announceVisible(policy.deadLetter.queueId, moved, this.clock.nowMs());
  }

  /**
   * Message counts by queueDepth, as /metrics reads them: dashboards and autoscalers poll this, and
   * an exact count would stall the server for seconds on a queue with a million messages.
   */
  private async infoOf(policy: JobQueuePolicy): Promise<JobQueueInfo> {
    const queue: QueueRecord = policy.queue;
    const deadLetterQueue = policy.deadLetter ? await this.deps.store.queueGet({ name: policy.deadLetter.name }) : undefined;
    const [jobCounts, messages, deadLetterStats] = await Promise.all([
      this.store.jobCountByStatus({ queueId: queue.id }),
      this.queues.queueDepth(queue),
      deadLetterQueue ? this.queues.queueDepth(deadLetterQueue) : Promise.resolve(undefined),
    ]);
    return queueInfoOf({ policy, jobCounts, messages, deadLetterStats, throughput: this.queues.activity.throughput(queue.name), nowMs: this.clock.nowMs() });
  }
}

/** The event a created job was logged with: a child may be waiting, or ended already by a failed parent. */
function submittedEventOf(job: JobRecord): JobEventType {
  switch (job.status) {
    case "waiting":
      return "job.waiting";
    case "failed":
      return "job.failed";
    case "canceled":
      return "job.canceled";
    default:
      return "job.queued";
  }
}

/** Events after which a limited lease may start a job: a slot freed (the job left running), or a job became leasable. */
const slotFreeingEvents: ReadonlySet<JobEventType> = new Set(["job.succeeded", "job.failed", "job.canceled", "job.retrying", "job.queued"]);
