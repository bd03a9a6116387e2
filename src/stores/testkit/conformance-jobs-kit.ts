/**
 * What the jobs conformance cases (and a store's own tests of what it adds, such as SQLite's
 * same-commit cases) use to drive a store: a queue, a submit, a lease, the policy core would pass.
 */
import { expect } from "vitest";
import { SluiceError } from "../../core/errors.js";
import { jobMessage } from "../../core/jobs/job-message.js";
import type { IdempotencyClaim, JobCreateResult, JobHandoff, JobLeaseParams, JobLeaseResult, NewJob, RetryPolicy } from "../../core/job-store.js";
import type { NewMessage } from "../../core/message.js";
import { defaultQueueConfig, type QueueRecord } from "../../core/queue.js";
import type { Store } from "../../core/store.js";
import { T0 } from "./conformance-context.js";

let jobCounter = 0;

export async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error instanceof SluiceError && error.code, `expected ${code}`).toBe(code);
}

/** A queued job with a fresh id (ready at T0 unless `overrides` say otherwise) and its message, as core builds them for a submit. */
export function newJobFor(queue: QueueRecord, overrides: Partial<NewJob> = {}): { job: NewJob; message: NewMessage } {
  jobCounter++;
  const id = `00000000-0000-4000-9000-${String(jobCounter).padStart(12, "0")}`;
  const job: NewJob = {
    id,
    queueId: queue.id,
    queueName: queue.name,
    status: "queued",
    inputJson: JSON.stringify({ n: jobCounter }),
    attempt: 0,
    maxAttempts: 3,
    priority: 0,
    createdAtMs: T0,
    updatedAtMs: T0,
    cancelRequested: false,
    availableAtMs: T0,
    ...overrides,
  };
  const message = jobMessage({ queue, jobId: id, inputJson: job.inputJson, priority: job.priority, availableAtMs: job.availableAtMs!, senderId: "000000000000" });
  return { job, message };
}

/** A lone submit's result: its one item's, with what its handoff leased. */
export type SubmitResult = JobCreateResult & { handoff?: JobLeaseResult };

export interface JobCaseKit {
  makeQueue(name?: string): Promise<QueueRecord>;
  submit(queue: QueueRecord, overrides?: Partial<NewJob>, idempotency?: IdempotencyClaim, handoff?: JobHandoff): Promise<SubmitResult>;
  policy(dlq?: QueueRecord): RetryPolicy;
  leaseParams(queue: QueueRecord, token: string): JobLeaseParams;
  lease(queue: QueueRecord, p?: { max?: number; nowMs?: number; leaseSeconds?: number; token?: string; dlq?: QueueRecord }): Promise<JobLeaseResult>;
  /** A running job whose completion a later lease can carry: what makes that lease a worker's report. */
  reportFor(queue: QueueRecord): Promise<NonNullable<JobLeaseParams["acks"]>>;
}

/** The retry policy core would pass (dead-lettering to `dlq` when given). */
export function retryPolicyFor(dlq?: QueueRecord): RetryPolicy {
  return { backoff: { baseSeconds: 1, capSeconds: 10 }, random: 0.5, deadLetterQueueId: dlq?.id, deadLetterSourceQueueName: "jobs", resultTtlSeconds: 60 };
}

/** A lease of up to 5 jobs of `queue` at T0 for 30 s, named by `token`. */
export function leaseParamsFor(queue: QueueRecord, token: string): JobLeaseParams {
  return { ...retryPolicyFor(), queueId: queue.id, queueName: queue.name, max: 5, nowMs: T0, leaseSeconds: 30, minSentAtMs: 0, leaseToken: token, adopt: { maxAttempts: 3 } };
}

export function jobCaseKit(store: () => Store): JobCaseKit {
  const policy = retryPolicyFor;
  const leaseParams = leaseParamsFor;
  const kit: JobCaseKit = {
    policy,
    leaseParams,
    async makeQueue(name = "jobs") {
      return (await store().queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 })).queue;
    },
    async submit(queue, overrides = {}, idempotency, handoff) {
      const { job, message } = newJobFor(queue, overrides);
      const r = await store().jobCreateMany({ items: [{ job, message, idempotency }], nowMs: job.createdAtMs, handoff });
      return r.handoff ? { ...r.results[0]!, handoff: r.handoff } : r.results[0]!;
    },
    lease(queue, p = {}) {
      return store().jobLease({
        ...policy(p.dlq),
        queueId: queue.id,
        queueName: queue.name,
        max: p.max ?? 10,
        nowMs: p.nowMs ?? T0,
        leaseSeconds: p.leaseSeconds ?? 30,
        minSentAtMs: 0,
        leaseToken: p.token ?? `${queue.id}.lease-aaaaaaaa`,
        adopt: { maxAttempts: 3 },
      });
    },
    async reportFor(queue) {
      const { job } = await kit.submit(queue);
      const token = `${queue.id}.tok-aaaaaaaa`;
      await kit.lease(queue, { token, max: 1 });
      return [{ kind: "complete", id: job.id, leaseToken: token, outputJson: '"ok"', resultTtlSeconds: 60 }];
    },
  };
  return kit;
}
