/**
 * Job queues: created on first use (with a `<name>-dlq` dead-letter queue), their job settings,
 * and a cache of what every transition needs to know about its queue beyond its record (settings
 * and dead-letter target), so that a walk reads them once, not per call. Like queue records
 * (queue-records.ts), it is dropped by queueChanged notices and trusted only while none can be missed.
 */
import type { Clock } from "../clock.js";
import { SluiceError, fail } from "../errors.js";
import type { QueueConfig, QueueRecord } from "../queue.js";
import type { QueueService } from "../queue-service.js";
import { NoticeKept } from "../notice-kept.js";
import { deadLetterTargetFor } from "../redrive.js";
import type { Store } from "../store.js";
import type { JobStore } from "../job-store.js";
import { type JobQueueSettings, type JobQueueSettingsPatch, applySettingsPatch, defaultJobQueueSettings, withSettingDefaults } from "../job-settings.js";

export interface JobQueuePolicy {
  queue: QueueRecord;
  settings: JobQueueSettings;
  deadLetter?: { queueId: number; name: string };
}

/** A redrive target not found yet (its queue may be made any moment, with no notice of ours) is looked for again after this. */
const missingTargetTtlMs = 5_000;
/** Job queues keep messages as long as SQS allows: a backlog must not silently expire jobs. */
const jobQueueRetentionSeconds = 1_209_600;
/** Job failures are dead-lettered by the jobs layer (maxAttempts); the SQS-level count is only a backstop. */
const backstopMaxReceiveCount = 1_000;
const deadLetterSuffix = "-dlq";

interface KeptPolicy {
  policy: JobQueuePolicy;
  fetchedAtMs: number;
  /** The notifier's epoch it was read in (Notifier.epoch). */
  epoch: number;
}

export interface JobQueuesDeps {
  store: JobStore & Pick<Store, "notifier">;
  queues: QueueService;
  clock: Clock;
}

export class JobQueues {
  /** By queue id: ids are never reused, so one map serves every account. */
  private readonly byId = new Map<number, KeptPolicy>();
  /** Whether what a read found may be kept, and for how long (notice-kept.ts). */
  private readonly kept: NoticeKept;
  private readonly queues: QueueService;

  constructor(private readonly deps: JobQueuesDeps) {
    this.queues = deps.queues;
    this.kept = new NoticeKept(deps.store.notifier);
  }

  /**
   * The queue, created with its dead-letter queue when missing (so the first submit is the whole
   * setup). Names resolve in `account` ("" is the server's own: QueueRecord.account), here and below.
   */
  async ensure(account: string, name: string): Promise<QueueRecord> {
    return this.queues.keptQueue(account, name) ?? (await this.lookUp(account, name)) ?? (await this.create(account, name));
  }

  /** Drops what is cached about a queue, its record too (a write against it failed: it may have been deleted). */
  forget(queue: QueueRecord): void {
    this.queues.forgetQueue(queue.id);
    this.forgetQueue(queue.id);
  }

  /** Drops its settings and dead-letter target, and those naming it as theirs (a queueChanged notice: Store.notifier). */
  forgetQueue(queueId: number): void {
    this.kept.dropped();
    this.byId.delete(queueId);
    for (const [id, kept] of this.byId) if (kept.policy.deadLetter?.queueId === queueId) this.byId.delete(id);
  }

  /** The kept policy of a queue, if it is still to be trusted. */
  private hit(queueId: number, nowMs: number): JobQueuePolicy | undefined {
    const kept = this.byId.get(queueId);
    if (kept === undefined) return undefined;
    const { policy } = kept;
    const missingTarget = policy.queue.config.redrivePolicy !== undefined && policy.deadLetter === undefined;
    if (this.kept.trusted(kept.epoch) && !(missingTarget && nowMs - kept.fetchedAtMs >= missingTargetTtlMs)) return policy;
    this.byId.delete(queueId);
    return undefined;
  }

  private lookUp(account: string, name: string): Promise<QueueRecord | undefined> {
    return this.queues.findQueue(account, name);
  }

  private async create(account: string, name: string): Promise<QueueRecord> {
    if (name.endsWith(".fifo")) fail("ValidationFailed", "Job queues are standard queues: a .fifo queue can't be created through the jobs API.");
    const dlqName = `${name}${deadLetterSuffix}`;
    if (dlqName.length > 80) fail("ValidationFailed", `Queue name ${name} is too long to create with its dead-letter queue ${dlqName} (at most 80 characters).`);
    // A DLQ of that name that already exists (made through SQS, say) is used as it is.
    if (!(await this.lookUp(account, dlqName))) {
      await this.createOrGet(account, dlqName, { messageRetentionPeriodSeconds: jobQueueRetentionSeconds });
    }
    return this.createOrGet(account, name, {
      messageRetentionPeriodSeconds: jobQueueRetentionSeconds,
      redrivePolicy: { deadLetterQueueName: dlqName, maxReceiveCount: backstopMaxReceiveCount },
    });
  }

  /** Creates the queue; one created meanwhile with other attributes (a race with the SQS API) is taken as it is. */
  private async createOrGet(account: string, name: string, config: Partial<QueueConfig>): Promise<QueueRecord> {
    try {
      return (await this.queues.createQueue(account, { name, config })).queue;
    } catch (err) {
      const existing = err instanceof SluiceError && err.code === "QueueAlreadyExists" ? await this.lookUp(account, name) : undefined;
      if (!existing) throw err;
      return existing;
    }
  }

  async get(account: string, name: string): Promise<QueueRecord> {
    return this.queues.getQueue(account, name);
  }

  /** Settings and dead-letter target of a queue (cached, also for the id-based lookups). */
  async policyOf(queue: QueueRecord): Promise<JobQueuePolicy> {
    const nowMs = this.deps.clock.nowMs();
    const cached = this.hit(queue.id, nowMs);
    if (cached && cached.queue.updatedAtMs === queue.updatedAtMs) return cached;
    const start = this.kept.begin();
    const [stored, target] = await Promise.all([
      this.deps.store.jobQueueSettingsGet({ queueId: queue.id }),
      deadLetterTargetFor(queue, (n) => this.queues.findQueue(queue.account, n)),
    ]);
    const policy: JobQueuePolicy = { queue, settings: stored ? withSettingDefaults(stored) : defaultJobQueueSettings };
    if (target) policy.deadLetter = { queueId: target.queueId, name: queue.config.redrivePolicy!.deadLetterQueueName };
    const epoch = this.kept.mayKeep(start);
    if (epoch !== undefined) this.byId.set(queue.id, { policy, fetchedAtMs: nowMs, epoch });
    return policy;
  }

  /**
   * By queue id (from a lease id); undefined when not cached, or when the queue is another
   * account's (the caller then looks the job up, which answers JobNotFound to this account).
   */
  async policyById(account: string, queueId: number): Promise<JobQueuePolicy | undefined> {
    const cached = this.hit(queueId, this.deps.clock.nowMs());
    return cached && cached.queue.account === account ? cached : undefined;
  }

  async policyByName(account: string, name: string): Promise<JobQueuePolicy> {
    return this.policyOf(await this.get(account, name));
  }

  async updateSettings(account: string, name: string, patch: JobQueueSettingsPatch): Promise<JobQueuePolicy> {
    // The patch is checked before the queue is created on first use, so a refused PUT creates nothing.
    const known = await this.lookUp(account, name);
    const stored = known && (await this.deps.store.jobQueueSettingsGet({ queueId: known.id }));
    const current = stored ? withSettingDefaults(stored) : defaultJobQueueSettings;
    const settings = applySettingsPatch(current, patch);
    const queue = known ?? (await this.ensure(account, name));
    await this.deps.store.jobQueueSettingsPut({ queueId: queue.id, settings, nowMs: this.deps.clock.nowMs() });
    this.forget(queue);
    // Other nodes' policy caches drop it too.
    this.deps.store.notifier.publish({ kind: "queueChanged", queueId: queue.id, queueName: queue.name });
    return this.policyOf(queue);
  }
}
