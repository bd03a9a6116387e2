/**
 * Submissions: a job and its message written in one store call, with its Idempotency-Key claim,
 * and handed in the same write to a worker long-polling the queue (a parked lease) when one
 * waits; and jobs built from a stored submit under given keys (a schedule's runs), built the same way.
 */
import { fail, SluiceError } from "../errors.js";
import type { QueueRecord } from "../queue.js";
import { storedQuotaOf } from "../quotas.js";
import { requestFingerprint } from "./idempotency.js";
import { newJobItem } from "./job-item.js";
import { checkJobInput } from "./job-message.js";
import { type JobServiceShared, JobServicePart, blobsFor } from "./job-service-shared.js";
import type { BlobRecord } from "../blobs/blob.js";
import type { JobCreateItem, JobCreateResult } from "../job-store.js";
import { type StoredSubmitOptions, type SubmitInput, checkRunAtHorizon, normalizeWebhook, validateSubmit } from "./job-validation.js";
import type { JobEventType, JobRecord, JobTrace, JobWebhook } from "../job.js";

export interface SubmitResult {
  job: JobRecord;
  /** True when an Idempotency-Key matched an earlier submit with the same body. */
  replayed: boolean;
}

export class JobSubmissions extends JobServicePart {
  constructor(
    shared: JobServiceShared,
    private readonly idempotencyKeyTtlMs: number,
  ) {
    super(shared);
  }

  /** `presetId`: submitAndWait subscribes to the job's events before the job exists. */
  async create(account: string, queueName: string, input: SubmitInput, idempotencyKey: string | undefined, presetId: string | undefined, trace?: JobTrace): Promise<SubmitResult> {
    validateSubmit(input);
    if (input.runAt !== undefined) checkRunAtHorizon(input.runAt, this.clock.nowMs());
    const webhook = input.webhook ? normalizeWebhook(input.webhook) : undefined;
    const inputJson = JSON.stringify(input.input);
    checkJobInput(inputJson); // before the queue is created on first use: a refused submit creates nothing
    const attachments = input.attachments === undefined ? undefined : await blobsFor(this.shared, "attachments").resolve(account, "attachments", input.attachments);
    const first = await this.jobQueues.ensure(account, queueName);
    try {
      return await this.createOn(first, input, inputJson, webhook, idempotencyKey, presetId, trace, attachments);
    } catch (err) {
      // The queue was deleted since it was cached (createOn forgot it): ensure() once more answers
      // QueueDeletedRecently, or creates it anew once that minute has passed.
      if (!(err instanceof SluiceError && err.code === "QueueNotFound")) throw err;
      return this.createOn(await this.jobQueues.ensure(account, queueName), input, inputJson, webhook, idempotencyKey, presetId, trace, attachments);
    }
  }

  private async createOn(
    queue: QueueRecord,
    input: SubmitInput,
    inputJson: string,
    webhook: JobWebhook | undefined,
    idempotencyKey: string | undefined,
    presetId: string | undefined,
    trace: JobTrace | undefined,
    attachments?: ReadonlyArray<[string, BlobRecord]>,
  ): Promise<SubmitResult> {
    const { settings } = await this.jobQueues.policyOf(queue);
    // The job's message body is its input: held against the account's per-queue quota like a send.
    const quotas = storedQuotaOf(this.queues.quotas, queue);
    if (quotas !== undefined) await this.queues.checkStoredQuota(queue, quotas, { messages: 1, bytes: Buffer.byteLength(inputJson, "utf8") });
    const nowMs = this.clock.nowMs();
    const id = presetId ?? this.ids.messageId();
    const fingerprint = idempotencyKey === undefined ? undefined : requestFingerprint(input);
    const idempotency = idempotencyKey === undefined ? undefined : { key: idempotencyKey, fingerprint: fingerprint!, expiresAtMs: nowMs + this.idempotencyKeyTtlMs };
    // Attached before the job is written, so no sweep takes them from a job that exists; given back
    // if the write is refused or replays another job (blob-service.ts).
    const attached = attachments === undefined ? undefined : await this.attach(queue.account, attachments, id, idempotencyKey);
    const item = newJobItem({ queue, settings, input, inputJson, webhook, id, nowMs, senderId: this.shared.senderId, idempotency, trace, attachmentsJson: attached?.json });
    const availableAtMs = item.job.availableAtMs!;
    // A worker long-polling this queue gets its lease in this write: one commit and one sync. (Not
    // for a child: it may well wait for its parents, and the worker would be held for nothing.)
    // Nor for a job with requires: the parked worker may not carry its labels.
    const claimed = availableAtMs <= nowMs && input.dependsOn === undefined && item.job.requires === undefined && queue.config.paused !== true ? this.parked.claim(queue.id) : undefined;
    const written = await this.store.jobCreateMany({ items: [item], nowMs, handoff: claimed?.params(nowMs) }).catch(async (err: unknown) => {
      claimed?.deliver(undefined);
      this.jobQueues.forget(queue); // e.g. the queue was deleted since it was cached
      if (attached) await blobsFor(this.shared, "attachments").detach(attached.attachedIds, id);
      throw err;
    });
    const lease = written.handoff;
    claimed?.deliver(lease);
    const result = written.results[0]!;
    if (!result.created) {
      if (attached) await blobsFor(this.shared, "attachments").detach(attached.attachedIds, id);
      if (result.fingerprint !== fingerprint) {
        fail("IdempotencyKeyReused", `Idempotency-Key ${idempotencyKey} was already used on queue ${queue.name} with a different request body.`);
      }
      return { job: result.job, replayed: true };
    }
    // Unless the lease in this write took the job, someone else should come for it (once it is queued:
    // a child may be waiting for its parents, or ended already by a failed one).
    const taken = lease?.changes.find((c) => c.job.id === id)?.job;
    if (!taken && result.job.status === "queued") this.queues.wakePollers(queue.id, [{ visibleAtMs: availableAtMs }], result.job.requires !== undefined);
    this.shared.publish({ job: result.job, events: [submittedEventOf(result.job)], version: 1 });
    // Answered as it is after the write: already running when a waiting worker took it.
    return { job: taken ?? result.job, replayed: false };
  }

  /** A replay of a keyed submit finds its blobs held by the job it replays: that is no conflict. */
  private attach(account: string, blobs: ReadonlyArray<[string, BlobRecord]>, jobId: string, idempotencyKey: string | undefined): Promise<{ json: string; attachedIds: string[] }> {
    const isReplay = idempotencyKey === undefined ? undefined : async (holder: string): Promise<boolean> => (await this.store.jobGet({ id: holder }))?.idempotencyKey === idempotencyKey;
    return blobsFor(this.shared, "attachments").attach({ account, field: "attachments", blobs, jobId, isReplay });
  }

  /**
   * One create item per key: the stored submit (its input and options as written and checked
   * then) as a job, the key its Idempotency-Key, so a key written twice makes one job.
   */
  async keyedItems(p: KeyedSubmits): Promise<JobCreateItem[]> {
    const queue = await this.jobQueues.ensure(p.account, p.queueName);
    const { settings } = await this.jobQueues.policyOf(queue);
    const options = JSON.parse(p.optionsJson) as StoredSubmitOptions;
    const webhook = options.webhook as JobWebhook | undefined;
    return p.keys.map((key, i) => {
      const idempotency = { key, fingerprint: key, expiresAtMs: p.nowMs + this.idempotencyKeyTtlMs };
      return newJobItem({ queue, settings, input: options, inputJson: p.inputsJson?.[i] ?? p.inputJson, webhook, id: this.ids.messageId(), nowMs: p.nowMs, senderId: this.shared.senderId, idempotency });
    });
  }

  /** After keyed items committed: workers woken and the created jobs told of like any submit's. */
  announceCreated(results: readonly JobCreateResult[]): void {
    for (const r of results) {
      if (!r.created) continue;
      this.queues.wakePollers(r.job.queueId, [{ visibleAtMs: r.job.availableAtMs ?? r.job.createdAtMs }], r.job.requires !== undefined);
      this.shared.publish({ job: r.job, events: [submittedEventOf(r.job)], version: 1 });
    }
  }
}

/** Jobs to build from a stored submit, one per idempotency key. */
export interface KeyedSubmits {
  account: string;
  queueName: string;
  /** StoredSubmitOptions as JSON text, checked when it was stored. */
  optionsJson: string;
  inputJson: string;
  /** One input per key instead of `inputJson` for all (a batch file's lines). */
  inputsJson?: readonly string[];
  keys: readonly string[];
  nowMs: number;
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
