/**
 * Leasing: the worker side of the jobs service. A lease long-polls the queue's waiters (or parks
 * for a submit to hand it a job in the submit's own write), may carry the acks of jobs the worker
 * finished, and is held back by the queue's limits; heartbeat, complete, fail and release end or
 * extend an attempt.
 */
import { fail, SluiceError } from "../errors.js";
import { limits } from "../limits.js";
import type { JobQueuePolicy } from "./job-queues.js";
import { JobServicePart, blobsFor } from "./job-service-shared.js";
import { checkJobInteger, leaseLimitsOf } from "../job-settings.js";
import type { JobAck, JobChange, JobLeaseParams, JobLeaseResult, JobStore, RetryPolicy } from "../job-store.js";
import { transitionJob } from "./job-actions.js";
import { leaseIdOf, queueIdOfLease } from "./job-tokens.js";
import { validateJobError, validateProgress } from "./job-validation.js";
import { checkOutputChunks } from "./output-chunks.js";
import { checkLabelSet, checkWorkerId } from "./requirements.js";
import type { JobError, JobRecord, LeasedJob } from "../job.js";

export interface LeaseInput {
  max?: number;
  waitSeconds?: number;
  leaseSeconds?: number;
  batchWindowMs?: number;
  /** The worker's labels: it may also lease jobs whose `requires` these contain (requirements.ts). */
  labels?: Record<string, string>;
  /** Names the worker in the workers list. */
  workerId?: string;
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

export class JobLeasing extends JobServicePart {
  /** Leases waiting because their queue's limits held them back, by queue id (wakeLimited). */
  readonly limitedQueues = new Map<number, number>();

  /**
   * A lease that first reports finished jobs (complete / fail), all in the lease's first write:
   * one request and one commit where a worker would otherwise make two. Each ack succeeds or fails
   * on its own; a malformed one refuses the whole request before anything is written. With acks
   * the lease never waits (waitSeconds and batchWindowMs count as 0), so their confirmation is
   * never held back by a long poll, and `max` may be 0 (acks only).
   */
  async leaseWithAcks(account: string, queueName: string, input: LeaseInput, ackInputs: LeaseAckInput[]): Promise<LeaseWithAcksResult> {
    const result = await this.leaseOrWait(account, queueName, input, ackInputs);
    await this.hideOtherAccountsAcks(account, result.acks);
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

  /** A refused ack on another account's job says JobNotFound, as a lone complete or fail would. */
  private async hideOtherAccountsAcks(account: string, acks: LeaseWithAcksResult["acks"]): Promise<void> {
    await Promise.all(
      acks.map(async (a, i) => {
        if (a.ok || a.error.code === "JobNotFound") return;
        const ours = await this.shared.get(account, a.id).then(
          () => true,
          () => false,
        );
        if (!ours) acks[i] = { id: a.id, ok: false, error: { code: "JobNotFound", message: `Job ${a.id} does not exist.` } };
      }),
    );
  }

  /**
   * A worker's call on a job by id and lease (heartbeat, complete, fail, release): the lease id
   * is the job's secret, so a call that succeeds is on a job of this account; a refused one is
   * answered JobNotFound when the job is another account's, like every other lookup.
   */
  private async ownJob<T>(account: string, id: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof SluiceError && err.code !== "JobNotFound") await this.shared.get(account, id);
      throw err;
    }
  }

  private async leaseOrWait(account: string, queueName: string, input: LeaseInput, ackInputs: LeaseAckInput[]): Promise<LeaseWithAcksResult> {
    const j = limits.jobs;
    const hasAcks = ackInputs.length > 0;
    const max = input.max ?? 1;
    checkJobInteger("max", max, hasAcks ? 0 : 1, j.leaseMaxJobs);
    const waitSeconds = input.waitSeconds ?? 0;
    checkJobInteger("waitSeconds", waitSeconds, 0, j.leaseWaitMaxSeconds);
    const batchWindowMs = input.batchWindowMs ?? 0;
    checkJobInteger("batchWindowMs", batchWindowMs, 0, j.batchWindowMaxMs);
    if (ackInputs.length > j.leaseMaxAcks) fail("ValidationFailed", `At most ${j.leaseMaxAcks} complete and fail entries in all; got ${ackInputs.length}.`);
    const labels = checkLabelSet("labels", input.labels);
    checkWorkerId(input.workerId);
    const checked = ackInputs.map((a) => this.checkAck(a));
    const queue = await this.jobQueues.ensure(account, queueName);
    const policy = await this.jobQueues.policyOf(queue);
    const sighting = input.workerId === undefined ? undefined : this.shared.workers.seen(queue.account, input.workerId, queue.name, labels);
    const leaseSeconds = input.leaseSeconds ?? policy.settings.leaseSeconds;
    checkJobInteger("leaseSeconds", leaseSeconds, 1, limits.visibilityTimeoutMaxSeconds);
    const acks = await this.resolveAcks(account, checked);
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
      adopt: { maxAttempts: policy.settings.maxAttempts, timeoutSeconds: policy.settings.timeoutSeconds, ...(queue.account === "" ? {} : { account: queue.account }) },
      limits: leaseLimits,
      ...(labels === undefined ? {} : { labels }),
    });
    const leaseLimits = leaseLimitsOf(policy.settings);
    /** A lease result (already on disk) joins this answer, and what it changed is told. */
    const take = (result: JobLeaseResult): void => {
      for (const change of result.changes) this.shared.publish(change);
      this.notifyDeadLettered(policy, result.changes);
      leased.push(...result.leased);
      if (sighting) this.shared.workers.leased(sighting, result.leased);
    };
    let paused = queue.config.paused === true;
    for (let round = 0; ; round++) {
      const version = this.queues.waiters.version(queue.id);
      // Every round after the first follows a wait, across which the queue may have been paused or resumed.
      if (round > 0) paused = await this.queues.isPaused(queue);
      const nowMs = this.clock.nowMs();
      const pendingAcks = ackResults.length === 0 && hasAcks ? acks : undefined;
      if (paused) {
        // Paused: a worker's reports still land, but nothing is leased until the queue resumes.
        if (pendingAcks) {
          const result = await this.store.jobLease({ ...leaseParams(nowMs, 0), acks: pendingAcks.flatMap((a) => ("ack" in a ? [a.ack] : [])) });
          ackResults = this.settleAcks(pendingAcks, result.acks);
          take(result);
        }
        const remainingMs = deadlineMs - this.clock.nowMs();
        if (remainingMs <= 0 || input.signal?.aborted || this.queues.waiters.isClosed || this.shared.isClosed() || this.queues.waiters.isGone(queue.id)) return { leased, acks: ackResults };
        await this.queues.waiters.wait(queue.id, version, remainingMs, max, input.signal);
        if (input.signal?.aborted) return { leased, acks: ackResults };
        continue;
      }
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
      if (remainingMs <= 0 || input.signal?.aborted || this.queues.waiters.isClosed || this.shared.isClosed() || this.queues.waiters.isGone(queue.id)) return { leased, acks: ackResults };
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
  private async resolveAcks(account: string, checked: Array<{ input: LeaseAckInput; outputJson?: string; error?: JobError }>): Promise<ResolvedAck[]> {
    return Promise.all(
      checked.map(async ({ input, outputJson, error }): Promise<ResolvedAck> => {
        let policy: JobQueuePolicy;
        try {
          policy = await this.policyForLease(account, input.id, input.leaseId);
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
      this.shared.publish(r.change);
      if (a.ack.kind === "fail") this.afterAttemptEnded(a.policy, r.change);
      return { id: a.id, ok: true, job: r.change.job };
    });
  }

  async heartbeat(account: string, id: string, p: { leaseId: string; leaseSeconds?: number; progress?: number }): Promise<{ cancelRequested: boolean; leaseExpiresAtMs: number; job: JobRecord }> {
    if (p.leaseSeconds !== undefined) checkJobInteger("leaseSeconds", p.leaseSeconds, 1, limits.visibilityTimeoutMaxSeconds);
    validateProgress(p.progress);
    // The lease's queue must be this account's (a cache hit, as for complete): a lease id is a
    // secret, but one that leaked to another account must not let it touch the job.
    await this.policyForLease(account, id, p.leaseId);
    const change = await this.ownJob(account, id, () => transitionJob(this.store, this.clock.nowMs(), { kind: "heartbeat", id, leaseToken: p.leaseId, leaseSeconds: p.leaseSeconds, progress: p.progress }));
    this.shared.publish(change);
    return { cancelRequested: change.job.cancelRequested, leaseExpiresAtMs: change.job.leaseExpiresAtMs!, job: change.job };
  }

  /** Streamed output: one job.output event of the attempt's next chunks (output-chunks.ts checks them). */
  async output(account: string, id: string, p: { leaseId: string; chunks: unknown }): Promise<{ cancelRequested: boolean; total: number }> {
    const { chunksJson, count } = checkOutputChunks(p.chunks);
    await this.policyForLease(account, id, p.leaseId);
    const out = await this.ownJob(account, id, () => this.store.jobOutputAppend({ id, leaseToken: p.leaseId, nowMs: this.clock.nowMs(), chunksJson, count }));
    this.shared.publish(out.change);
    return { cancelRequested: out.change.job.cancelRequested, total: out.total };
  }

  async complete(account: string, id: string, p: { leaseId: string; output?: unknown; outputAttachments?: Record<string, string> }): Promise<JobRecord> {
    const outputJson = this.checkOutput(p.output);
    const field = "outputAttachments";
    const resolved = p.outputAttachments === undefined ? undefined : await blobsFor(this.shared, field).resolve(account, field, p.outputAttachments);
    const policy = await this.policyForLease(account, id, p.leaseId);
    // Attached before the completion is written, given back if it is refused (blob-service.ts).
    const attached = resolved === undefined ? undefined : await blobsFor(this.shared, field).attach({ account, field, blobs: resolved, jobId: id });
    const change = await this.ownJob(account, id, () =>
      transitionJob(this.store, this.clock.nowMs(), { kind: "complete", id, leaseToken: p.leaseId, outputJson, resultTtlSeconds: policy.settings.resultTtlSeconds, outputAttachmentsJson: attached?.json }),
    ).catch(async (err: unknown) => {
      if (attached) await blobsFor(this.shared, field).detach(attached.attachedIds, id);
      throw err;
    });
    this.shared.publish(change);
    return change.job;
  }

  async fail(account: string, id: string, p: { leaseId: string; error: JobError; retryable?: boolean; retryAfterSeconds?: number }): Promise<JobRecord> {
    const error = validateJobError(p.error);
    if (p.retryAfterSeconds !== undefined) checkJobInteger("retryAfterSeconds", p.retryAfterSeconds, 0, limits.jobs.retryDelayMaxSeconds);
    const policy = await this.policyForLease(account, id, p.leaseId);
    const change = await this.ownJob(account, id, () =>
      transitionJob(this.store, this.clock.nowMs(), {
        kind: "fail",
        ...this.retryPolicy(policy),
        id,
        leaseToken: p.leaseId,
        error,
        retryable: p.retryable ?? true,
        retryAfterSeconds: p.retryAfterSeconds,
      }),
    );
    this.shared.publish(change);
    this.afterAttemptEnded(policy, change);
    return change.job;
  }

  /** The worker hands back a lease it never started: queued again at once, the attempt given back. */
  async release(account: string, id: string, p: { leaseId: string }): Promise<JobRecord> {
    const policy = await this.policyForLease(account, id, p.leaseId);
    const change = await this.ownJob(account, id, () => transitionJob(this.store, this.clock.nowMs(), { kind: "release", id, leaseToken: p.leaseId, resultTtlSeconds: policy.settings.resultTtlSeconds }));
    this.shared.publish(change);
    this.afterAttemptEnded(policy, change);
    return change.job;
  }

  /**
   * A job left running (or another came): leases held back by their queue's limits try again.
   * Without the job's queue (a notice from another node that left the record out), every such queue's.
   */
  wakeLimited(queueId: number | undefined): void {
    for (const [id, waiting] of this.limitedQueues) if (queueId === undefined || id === queueId) this.queues.waiters.notify(id, waiting);
  }

  private checkOutput(output: unknown): string {
    const outputJson = JSON.stringify(output === undefined ? null : output);
    const size = Buffer.byteLength(outputJson, "utf8");
    if (size > limits.messageSizeMaxBytes) fail("MessageTooLong", `The output is ${size} bytes of JSON; at most ${limits.messageSizeMaxBytes} are kept.`);
    return outputJson;
  }

  /** Leases handed to a request that is gone: released in one write (attempts given back), best effort — their leases expiring is the fallback. */
  private async giveBack(leased: readonly LeasedJob[], policy: JobQueuePolicy): Promise<void> {
    const resultTtlSeconds = policy.settings.resultTtlSeconds;
    const actions = leased.map((job) => ({ kind: "release" as const, id: job.id, leaseToken: job.leaseToken, resultTtlSeconds }));
    const results = await this.store.jobTransitionMany({ nowMs: this.clock.nowMs(), actions }).catch(() => []);
    for (const r of results) {
      if (!r.ok) continue;
      this.shared.publish(r.change);
      this.afterAttemptEnded(policy, r.change);
    }
  }

  retryPolicy(policy: JobQueuePolicy): RetryPolicy {
    return {
      backoff: policy.settings.backoff,
      random: this.random(),
      deadLetterQueueId: policy.deadLetter?.queueId,
      deadLetterSourceQueueName: policy.queue.name,
      resultTtlSeconds: policy.settings.resultTtlSeconds,
    };
  }

  /** The queue's policy from the lease id's queue, or through the job when that isn't cached. */
  private async policyForLease(account: string, id: string, leaseId: string): Promise<JobQueuePolicy> {
    const queueId = queueIdOfLease(leaseId);
    const cached = queueId === undefined ? undefined : await this.jobQueues.policyById(account, queueId);
    if (cached) return cached;
    const job = await this.shared.get(account, id);
    return this.jobQueues.policyByName(account, job.queueName);
  }

  /** A retried job's message became visible (now or later); a failed one's went to the dead-letter queue. */
  afterAttemptEnded(policy: JobQueuePolicy, change: JobChange): void {
    // Retried: its message is visible again now, or after the backoff.
    if (change.job.status === "queued") this.queues.wakePollers(policy.queue.id, [{ visibleAtMs: change.job.availableAtMs ?? this.clock.nowMs() }], change.job.requires !== undefined);
    this.notifyDeadLettered(policy, [change]);
  }

  private notifyDeadLettered(policy: JobQueuePolicy, changes: JobChange[]): void {
    const moved = changes.filter((c) => c.job.status === "failed").length;
    if (moved > 0 && policy.deadLetter) this.queues.announceVisible(policy.deadLetter.queueId, moved, this.clock.nowMs());
  }
}
