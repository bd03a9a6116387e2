/**
 * Conformance cases for the jobs half of the Store (core/jobs/job-store.ts): every store applies
 * core's transitions to the job row, its message and the webhook outbox in one write.
 */
import { expect } from "vitest";
import { SluiceError } from "../../core/errors.js";
import { jobMessage } from "../../core/jobs/job-message.js";
import { defaultJobQueueSettings } from "../../core/jobs/job-settings.js";
import type { JobLeaseParams, NewJob, RetryPolicy } from "../../core/jobs/job-store.js";
import type { JobWebhook } from "../../core/jobs/job.js";
import type { NewMessage } from "../../core/message.js";
import { defaultQueueConfig, type QueueRecord } from "../../core/queue.js";
import type { ConformanceContext } from "./conformance-context.js";

const T0 = 1_700_000_000_000;
let jobCounter = 0;

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
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
  const message = jobMessage({ queue, jobId: id, inputJson: job.inputJson, priority: job.priority, nowMs: T0, availableAtMs: job.availableAtMs!, senderId: "000000000000" });
  return { job, message };
}

export function registerJobCases({ store, reopen, test }: ConformanceContext): void {
  async function makeQueue(name = "jobs"): Promise<QueueRecord> {
    return (await store().queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 })).queue;
  }

  async function submit(queue: QueueRecord, overrides: Partial<NewJob> = {}, idempotency?: { key: string; fingerprint: string; expiresAtMs: number }, lease?: () => JobLeaseParams | undefined) {
    const { job, message } = newJobFor(queue, overrides);
    return store().jobCreate({ job, message, idempotency, nowMs: T0, ...(lease ? { lease } : {}) });
  }

  const policy = (dlq?: QueueRecord): RetryPolicy => ({
    backoff: { baseSeconds: 1, capSeconds: 10 },
    random: 0.5,
    deadLetterQueueId: dlq?.id,
    deadLetterSourceQueueName: "jobs",
    resultTtlSeconds: 60,
  });

  function leaseParams(queue: QueueRecord, token: string): JobLeaseParams {
    return { ...policy(), queueId: queue.id, queueName: queue.name, max: 5, nowMs: T0, leaseSeconds: 30, minSentAtMs: 0, leaseToken: token, adopt: { maxAttempts: 3 } };
  }

  function lease(queue: QueueRecord, p: { max?: number; nowMs?: number; leaseSeconds?: number; token?: string; dlq?: QueueRecord } = {}) {
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
  }

  test("jobs: create writes the job and its message together; get and list read them back", async () => {
    const q = await makeQueue();
    const created = await submit(q, { metadataJson: '{"k":"v"}' });
    expect(created.created).toBe(true);
    const got = await store().jobGet({ id: created.job.id });
    expect(got).toMatchObject({ id: created.job.id, status: "queued", inputJson: created.job.inputJson, metadataJson: '{"k":"v"}', messageSeq: created.job.messageSeq });
    expect((await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).visible).toBe(1);
    const second = await submit(q);
    expect((await store().jobList({ queueId: q.id, limit: 10 })).map((j) => j.id)).toEqual([second.job.id, created.job.id]);
    expect((await store().jobList({ queueId: q.id, beforeSeq: second.job.seq, limit: 10 })).map((j) => j.id)).toEqual([created.job.id]);
    expect(await store().jobCountByStatus({ queueId: q.id })).toEqual({ queued: 2, running: 0, succeeded: 0, failed: 0, canceled: 0 });
  });

  test("jobs: an idempotency claim returns the claimed job until it expires", async () => {
    const q = await makeQueue();
    const first = await submit(q, {}, { key: "k", fingerprint: "f1", expiresAtMs: T0 + 1000 });
    const again = await submit(q, {}, { key: "k", fingerprint: "f2", expiresAtMs: T0 + 1000 });
    expect(again).toMatchObject({ created: false, fingerprint: "f1", job: { id: first.job.id } });
    expect((await store().jobList({ queueId: q.id, limit: 10 })).length).toBe(1); // nothing else was written
  });

  test("jobs: lease takes ready messages by priority, runs their jobs, and hides the messages", async () => {
    const q = await makeQueue();
    const low = await submit(q, { priority: 1 });
    const high = await submit(q, { priority: 7 });
    const r = await lease(q, { token: `${q.id}.tok-aaaaaaaa` });
    expect(r.leased.map((j) => [j.id, j.status, j.attempt, j.leaseToken, j.leaseExpiresAtMs])).toEqual([
      [high.job.id, "running", 1, `${q.id}.tok-aaaaaaaa`, T0 + 30_000],
      [low.job.id, "running", 1, `${q.id}.tok-aaaaaaaa`, T0 + 30_000],
    ]);
    expect(r.changes.map((c) => c.events)).toEqual([["job.started"], ["job.started"]]);
    expect((await lease(q)).leased).toEqual([]);
    // The lease expires: the next lease is the next attempt.
    const again = await lease(q, { nowMs: T0 + 30_000, token: `${q.id}.tok-bbbbbbbb` });
    expect(again.leased.map((j) => j.attempt)).toEqual([2, 2]);
  });

  test("jobs: a create may carry a lease, run after the insert in the same write", async () => {
    const q = await makeQueue();
    const older = await submit(q);
    const token = `${q.id}.tok-cccccccc`;
    const r = await submit(q, {}, undefined, () => leaseParams(q, token));
    const id = r.job.id;
    expect(r.created && r.job.status).toBe("queued");
    // The lease sees the job just inserted, beside the one already waiting, in receive order.
    expect(r.created && r.lease?.leased.map((j) => [j.id, j.status, j.leaseToken])).toEqual([
      [older.job.id, "running", token],
      [id, "running", token],
    ]);
    expect(await store().jobGet({ id })).toMatchObject({ status: "running", attempt: 1, leaseToken: token });
  });

  test("jobs: a create runs the lease it asks for only when it creates the job", async () => {
    const q = await makeQueue();
    const claim = { key: "k", fingerprint: "f", expiresAtMs: T0 + 1000 };
    const first = await submit(q, {}, claim, () => leaseParams(q, `${q.id}.tok-dddddddd`));
    expect(first.created && first.lease?.leased.map((j) => j.id)).toEqual([first.job.id]);
    // No worker to give it to (every parked one had gone): the job is created and stays queued.
    const unclaimed = await submit(q, {}, undefined, () => undefined);
    expect(unclaimed.created && unclaimed.lease).toBeUndefined();
    // A replay writes nothing, so it leases nothing — not even the job that is ready.
    const replay = await submit(q, {}, claim, () => leaseParams(q, `${q.id}.tok-eeeeeeee`));
    expect(replay).toMatchObject({ created: false, job: { id: first.job.id } });
    expect("lease" in replay).toBe(false);
    expect(await store().jobGet({ id: first.job.id })).toMatchObject({ status: "running", leaseToken: `${q.id}.tok-dddddddd` });
    expect(await store().jobGet({ id: unclaimed.job.id })).toMatchObject({ status: "queued" });
  });

  test("jobs: a lease applies its acks first, in the same write, each answered on its own", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    const b = await submit(q);
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token });
    const c = await submit(q);
    const r = await store().jobLease({
      ...policy(),
      queueId: q.id,
      queueName: q.name,
      max: 10,
      nowMs: T0 + 1,
      leaseSeconds: 30,
      minSentAtMs: 0,
      leaseToken: `${q.id}.tok-bbbbbbbb`,
      adopt: { maxAttempts: 3 },
      acks: [
        { kind: "complete", id: a.job.id, leaseToken: token, outputJson: '"done"', resultTtlSeconds: 60 },
        { kind: "complete", id: a.job.id, leaseToken: token, outputJson: '"again"', resultTtlSeconds: 60 },
        { kind: "complete", id: "nope", leaseToken: token, outputJson: "null", resultTtlSeconds: 60 },
        { kind: "fail", ...policy(), id: b.job.id, leaseToken: token, error: { message: "x" }, retryable: true, retryAfterSeconds: 0 },
      ],
    });
    expect(r.acks.map((x) => (x.ok ? x.change.job.status : x.error.code))).toEqual(["succeeded", "JobAlreadyFinished", "JobNotFound", "queued"]);
    // b, retried with no delay, is leased again by this very request, beside c.
    expect(r.leased.map((j) => j.id).sort()).toEqual([b.job.id, c.job.id].sort());
    expect(await store().jobGet({ id: a.job.id })).toMatchObject({ status: "succeeded", outputJson: '"done"' });
  });

  test("jobs: a lease runs after the other writes of its commit: it gets the jobs submitted with it", async () => {
    const q = await makeQueue();
    const done = await submit(q);
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token });
    // A worker's report and a submit arrive together: the lease, asked for first, runs after the
    // submit's write in the same commit and takes its job (JobStore.jobLease).
    const reported = store().jobLease({
      ...leaseParams(q, `${q.id}.tok-bbbbbbbb`),
      acks: [{ kind: "complete", id: done.job.id, leaseToken: token, outputJson: '"ok"', resultTtlSeconds: 60 }],
    });
    const submitted = submit(q);
    const [r, s] = await Promise.all([reported, submitted]);
    expect(r.acks.map((a) => a.ok && a.change.job.status)).toEqual(["succeeded"]);
    expect(r.leased.map((j) => j.id)).toEqual([s.job.id]);
    expect(await store().jobGet({ id: s.job.id })).toMatchObject({ status: "running", leaseToken: `${q.id}.tok-bbbbbbbb` });
  });

  /** A running job whose completion a later lease can carry: what makes that lease a worker's report. */
  async function reportFor(q: QueueRecord): Promise<NonNullable<JobLeaseParams["acks"]>> {
    const { job } = await submit(q);
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token, max: 1 });
    return [{ kind: "complete", id: job.id, leaseToken: token, outputJson: '"ok"', resultTtlSeconds: 60 }];
  }

  test("jobs: a lease at the end of its commit takes the commit's submits in receive order with the jobs ready before: priority, then age", async () => {
    const q = await makeQueue();
    const older = await submit(q, { priority: 5 });
    const leasing = lease(q, { max: 2, token: `${q.id}.tok-bbbbbbbb` });
    const submitted = await Promise.all([submit(q, { priority: 5 }), submit(q, { priority: 9 }), submit(q, { priority: 5 })]);
    const [fiveA, nine, fiveB] = submitted.map((s) => s.job.id);
    expect((await leasing).leased.map((j) => j.id)).toEqual([nine, older.job.id]);
    // The two it left are written queued, in the order they came.
    expect((await lease(q, { max: 5, token: `${q.id}.tok-cccccccc` })).leased.map((j) => j.id)).toEqual([fiveA, fiveB]);
  });

  test("jobs: a job leased in the commit that submits it is like any leased job: running, in flight, retried once its lease expires", async () => {
    const q = await makeQueue();
    const acks = await reportFor(q);
    const token = `${q.id}.tok-bbbbbbbb`;
    const reported = store().jobLease({ ...leaseParams(q, token), acks });
    const s = await submit(q);
    const r = await reported;
    expect(r.leased.map((j) => j.id)).toEqual([s.job.id]);
    // The submit answers the job as submitted; the lease, as it leaves it.
    expect(s.job).toMatchObject({ status: "queued", attempt: 0 });
    expect(r.leased[0]).toMatchObject({ status: "running", attempt: 1, leaseToken: token, startedAtMs: T0, leaseExpiresAtMs: T0 + 30_000, seq: s.job.seq, messageSeq: s.job.messageSeq });
    expect(await store().jobGet({ id: s.job.id })).toMatchObject({ status: "running", attempt: 1, leaseToken: token, messageSeq: s.job.messageSeq });
    expect(await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 1 });
    expect((await lease(q, { nowMs: T0 + 29_999 })).leased).toEqual([]);
    // Its message comes back when the lease ends, as a received message's does.
    expect((await lease(q, { nowMs: T0 + 30_000, token: `${q.id}.tok-cccccccc` })).leased.map((j) => [j.id, j.attempt])).toEqual([[s.job.id, 2]]);
    const done = await store().jobComplete({ id: s.job.id, leaseToken: `${q.id}.tok-cccccccc`, nowMs: T0 + 30_001, outputJson: '"ok"', resultTtlSeconds: 60 });
    expect(done.job.status).toBe("succeeded");
    expect(await store().queueStats({ queueId: q.id, nowMs: T0 + 30_001, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0 });
  });

  test("jobs: an Idempotency-Key used twice in one commit names one job", async () => {
    const q = await makeQueue();
    const claim = { key: "k-1", fingerprint: "f-1", expiresAtMs: T0 + 60_000 };
    const [first, replay] = await Promise.all([submit(q, {}, claim), submit(q, {}, claim)]);
    expect(first.created).toBe(true);
    expect(replay).toMatchObject({ created: false, fingerprint: "f-1", job: { id: first.job.id } });
    expect((await store().jobList({ queueId: q.id, limit: 10 })).map((j) => j.id)).toEqual([first.job.id]);
  });

  test("jobs: a later write of the same commit sees the commit's submits (a cancel of one)", async () => {
    const q = await makeQueue();
    const { job, message } = newJobFor(q);
    const [created, canceled] = await Promise.all([store().jobCreate({ job, message, nowMs: T0 }), store().jobCancel({ id: job.id, nowMs: T0, resultTtlSeconds: 60 })]);
    expect(created.created).toBe(true);
    expect(canceled.job.status).toBe("canceled");
    expect(await store().jobGet({ id: job.id })).toMatchObject({ status: "canceled" });
    expect(await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0 });
  });

  test("jobs: a submit to a queue deleted earlier in the same commit fails alone; a submit to another queue stands", async () => {
    const q = await makeQueue();
    const other = await makeQueue("other");
    const before = submit(q);
    const deleted = store().queueDelete({ id: q.id, nowMs: T0 });
    const after = submit(q);
    const elsewhere = submit(other);
    const [b, d] = await Promise.all([before, deleted]);
    expect(d.liveJobIds).toEqual([b.job.id]);
    await expectCode(after, "QueueNotFound");
    const e = await elsewhere;
    expect(await store().jobGet({ id: e.job.id })).toMatchObject({ status: "queued" });
  });

  test("jobs: many submits in one commit are kept in the order they came", async () => {
    const q = await makeQueue();
    const submitted = await Promise.all(Array.from({ length: 25 }, () => submit(q)));
    const seqs = submitted.map((s) => s.job.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(submitted.map((s) => s.job.messageSeq)).size).toBe(25);
    expect((await lease(q, { max: 25 })).leased.map((j) => j.id)).toEqual(submitted.map((s) => s.job.id));
  });

  test("jobs: heartbeat, complete and fail check the lease; complete deletes the message", async () => {
    const q = await makeQueue();
    const { job } = await submit(q);
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token });
    await expectCode(store().jobHeartbeat({ id: job.id, leaseToken: `${q.id}.wrong-aaaa`, nowMs: T0 + 1 }), "LeaseMismatch");
    await expectCode(store().jobHeartbeat({ id: "nope", leaseToken: token, nowMs: T0 + 1 }), "JobNotFound");
    const beat = await store().jobHeartbeat({ id: job.id, leaseToken: token, nowMs: T0 + 10_000, progress: 0.5 });
    expect(beat).toMatchObject({ events: ["job.progress"], job: { leaseExpiresAtMs: T0 + 40_000, progress: 0.5 } });
    expect((await lease(q, { nowMs: T0 + 35_000 })).leased).toEqual([]); // the message's visibility moved too
    const done = await store().jobComplete({ id: job.id, leaseToken: token, nowMs: T0 + 20_000, outputJson: '"ok"', resultTtlSeconds: 60 });
    expect(done.job).toMatchObject({ status: "succeeded", outputJson: '"ok"', finishedAtMs: T0 + 20_000, expiresAtMs: T0 + 80_000 });
    expect(await store().queueStats({ queueId: q.id, nowMs: T0 + 100_000, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
  });

  test("jobs: a retryable failure hides the message for the backoff; a final one moves it to the dead-letter queue", async () => {
    const q = await makeQueue();
    const dlq = await makeQueue("jobs-dlq");
    const { job } = await submit(q, { maxAttempts: 2 });
    await lease(q, { token: `${q.id}.tok-aaaaaaaa` });
    const retry = await store().jobFail({ ...policy(dlq), id: job.id, leaseToken: `${q.id}.tok-aaaaaaaa`, nowMs: T0, error: { message: "e1" }, retryable: true });
    expect(retry.job).toMatchObject({ status: "queued", availableAtMs: T0 + 500, error: { message: "e1" } });
    expect((await lease(q, { nowMs: T0 + 499 })).leased).toEqual([]);
    await lease(q, { nowMs: T0 + 500, token: `${q.id}.tok-bbbbbbbb` });
    const failed = await store().jobFail({ ...policy(dlq), id: job.id, leaseToken: `${q.id}.tok-bbbbbbbb`, nowMs: T0 + 600, error: { message: "e2", type: "X" }, retryable: true });
    expect(failed).toMatchObject({ events: ["job.failed"], job: { status: "failed", attempt: 2, error: { message: "e2", type: "X" } } });
    const inDlq = await store().messageReceive({ queueId: dlq.id, max: 10, nowMs: T0 + 600, visibleUntilMs: T0 + 700, minSentAtMs: 0, receiptToken: "tok-dlq-aaaa" });
    expect(inDlq.messages.map((m) => [m.messageId, m.deadLetterSourceQueueName])).toEqual([[job.id, "jobs"]]);
  });

  test("jobs: a final failure whose dead-letter queue was deleted since deletes the message, as without one", async () => {
    const q = await makeQueue();
    const dlq = await makeQueue("jobs-dlq");
    const failing = await submit(q, { maxAttempts: 1 });
    const expiring = await submit(q, { maxAttempts: 1 });
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token });
    await store().queueDelete({ id: dlq.id, nowMs: T0 });
    // Core still names the queue (its policy is cached): a fail, and an expired lease's sweep.
    const failed = await store().jobFail({ ...policy(dlq), id: failing.job.id, leaseToken: token, nowMs: T0 + 1, error: { message: "e" }, retryable: false });
    const expired = await store().jobExpire({ ...policy(dlq), id: expiring.job.id, nowMs: T0 + 30_000 });
    for (const change of [failed, expired!]) {
      expect(change).toMatchObject({ events: ["job.failed"], job: { status: "failed" } });
      expect(change.job.messageSeq).toBeUndefined();
      expect((await store().jobGet({ id: change.job.id }))!.messageSeq).toBeUndefined();
    }
    expect(await store().queueStats({ queueId: q.id, nowMs: T0 + 60_000, minSentAtMs: 0 })).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  test("jobs: a released lease makes the message visible at once, the attempt given back", async () => {
    const q = await makeQueue();
    const { job } = await submit(q, { maxAttempts: 1 });
    await lease(q, { token: `${q.id}.tok-aaaaaaaa` });
    const released = await store().jobRelease({ id: job.id, leaseToken: `${q.id}.tok-aaaaaaaa`, nowMs: T0 + 5, resultTtlSeconds: 60 });
    expect(released).toMatchObject({ events: ["job.queued"], job: { status: "queued", attempt: 0, availableAtMs: T0 + 5 } });
    expect((await store().jobGet({ id: job.id }))?.leaseExpiresAtMs).toBeUndefined();
    const again = await lease(q, { nowMs: T0 + 5, token: `${q.id}.tok-bbbbbbbb` });
    expect(again.leased).toMatchObject([{ id: job.id, attempt: 1 }]);
  });

  test("jobs: cancel deletes a queued job's message; a stale message of a finished job is dropped by lease", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    expect((await store().jobCancel({ id: a.job.id, nowMs: T0, resultTtlSeconds: 60 })).job.status).toBe("canceled");
    expect((await lease(q)).leased).toEqual([]);
    expect(await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0 });
  });

  test("jobs: a purge or retention ends the live jobs of the messages it deletes and returns their changes", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    const b = await submit(q);
    await lease(q, { max: 1 }); // a runs, b stays queued: both end
    const purged = await store().messagePurge({ queueId: q.id, nowMs: T0 + 10 });
    expect(purged?.deleted).toBe(2);
    const ended = purged!.jobChanges.map((c) => [c.job.id, c.job.status, c.job.error?.type, c.job.finishedAtMs, c.events]).sort();
    expect(ended).toEqual([
      [a.job.id, "canceled", "QueuePurged", T0 + 10, ["job.canceled"]],
      [b.job.id, "canceled", "QueuePurged", T0 + 10, ["job.canceled"]],
    ]);
    expect(await store().jobGet({ id: a.job.id })).toMatchObject({ status: "canceled" });

    const old = await makeQueue("retention");
    const c = await submit(old);
    expect(await store().messageExpire({ queueId: old.id, minSentAtMs: T0, nowMs: T0 + 20 })).toEqual({ deleted: 0, jobChanges: [] });
    const expired = await store().messageExpire({ queueId: old.id, minSentAtMs: T0 + 1, nowMs: T0 + 20 });
    expect(expired.deleted).toBe(1);
    expect(expired.jobChanges).toEqual([{ job: await store().jobGet({ id: c.job.id }), events: ["job.failed"] }]);
    expect(expired.jobChanges[0]!.job).toMatchObject({ status: "failed", error: { type: "MessageExpired" }, finishedAtMs: T0 + 20 });
  });

  test("jobs: queueDelete deletes the queue's jobs and returns the live ones (queued, running)", async () => {
    const q = await makeQueue();
    const other = await makeQueue("other");
    const running = await submit(q);
    await lease(q, { max: 1 });
    const queued = await submit(q);
    const canceled = await submit(q);
    await store().jobCancel({ id: canceled.job.id, nowMs: T0, resultTtlSeconds: 60 });
    const elsewhere = await submit(other);
    const deleted = await store().queueDelete({ id: q.id, nowMs: T0 + 1 });
    expect([...deleted.liveJobIds].sort()).toEqual([running.job.id, queued.job.id].sort());
    for (const { job } of [running, queued, canceled]) expect(await store().jobGet({ id: job.id })).toBeUndefined();
    expect(await store().jobGet({ id: elsewhere.job.id })).toMatchObject({ status: "queued" });
    expect(await store().queueDelete({ id: q.id, nowMs: T0 + 2 })).toEqual({ liveJobIds: [] }); // already gone
  });

  test("jobs: lease adopts a message that has no job", async () => {
    const q = await makeQueue();
    const message = jobMessage({ queue: q, jobId: "11111111-1111-4111-8111-111111111111", inputJson: '{"from":"sqs"}', priority: 2, nowMs: T0, availableAtMs: T0, senderId: "x" });
    await store().messageSend({ queueId: q.id, messages: [message] });
    const r = await lease(q);
    expect(r.leased.map((j) => [j.id, j.inputJson, j.priority, j.attempt])).toEqual([["11111111-1111-4111-8111-111111111111", '{"from":"sqs"}', 2, 1]]);
  });

  test("jobs: the sweep finds expired leases and timed-out attempts; expire re-checks inside its write", async () => {
    const q = await makeQueue();
    const a = await submit(q);
    const b = await submit(q, { timeoutSeconds: 5 });
    await lease(q, { leaseSeconds: 60 });
    expect(await store().jobListExpired({ nowMs: T0 + 4_999, limit: 10 })).toEqual([]);
    expect(await store().jobListExpired({ nowMs: T0 + 5_000, limit: 10 })).toEqual([{ id: b.job.id, queueName: "jobs" }]);
    const expired = await store().jobExpire({ ...policy(), id: b.job.id, nowMs: T0 + 5_000 });
    expect(expired).toMatchObject({ events: ["job.retrying"], job: { status: "queued", error: { type: "Timeout" } } });
    expect(await store().jobExpire({ ...policy(), id: b.job.id, nowMs: T0 + 5_000 })).toBeUndefined();
    const all = await store().jobListExpired({ nowMs: T0 + 60_000, limit: 10 });
    expect(all.map((x) => x.id)).toEqual([a.job.id]);
  });

  test("jobs: webhook outbox rows are written with the transition, claimed, recorded and listed", async () => {
    const q = await makeQueue();
    const webhook: JobWebhook = { url: "https://hooks.example/x", events: ["job.started", "job.succeeded"] };
    const { job } = await submit(q, { webhook });
    await lease(q, { token: `${q.id}.tok-aaaaaaaa` });
    await store().jobComplete({ id: job.id, leaseToken: `${q.id}.tok-aaaaaaaa`, nowMs: T0 + 1, outputJson: "1", resultTtlSeconds: 1 });
    const claimed = await store().webhookDeliveryClaim({ nowMs: T0 + 1, limit: 10, claimMs: 60_000 });
    expect(claimed.map((d) => [d.event, d.job.status, d.url])).toEqual([
      ["job.started", "running", webhook.url],
      ["job.succeeded", "succeeded", webhook.url],
    ]);
    expect(claimed[0]!.job.leaseToken).toBeUndefined(); // snapshots never carry the lease
    expect(await store().webhookDeliveryClaim({ nowMs: T0 + 2, limit: 10, claimMs: 60_000 })).toEqual([]);
    expect(await store().webhookDeliveryNextDueAt()).toBe(T0 + 60_001);
    await store().webhookDeliveryRecord({ id: claimed[0]!.id, nowMs: T0 + 3, delivered: true, statusCode: 204 });
    await store().webhookDeliveryRecord({ id: claimed[1]!.id, nowMs: T0 + 3, delivered: false, statusCode: 500, error: "HTTP 500", nextAttemptAtMs: T0 + 5_000 });
    const listed = await store().webhookDeliveryList({ jobId: job.id });
    expect(listed.map((d) => [d.status, d.attempts, d.lastStatusCode, d.nextAttemptAtMs])).toEqual([
      ["delivered", 1, 204, undefined],
      ["pending", 1, 500, T0 + 5_000],
    ]);
    // A finished job is kept while a delivery about it is pending.
    expect((await store().jobPrune({ nowMs: T0 + 10_000, limit: 10 })).jobs).toBe(0);
    await store().webhookDeliveryRecord({ id: claimed[1]!.id, nowMs: T0 + 6_000, delivered: false, error: "gave up" });
    expect((await store().jobPrune({ nowMs: T0 + 10_000, limit: 10 })).jobs).toBe(1);
    expect(await store().jobGet({ id: job.id })).toBeUndefined();
  });

  test("jobs: queue settings, and everything survives reopen", async () => {
    const q = await makeQueue();
    expect(await store().jobQueueSettingsGet({ queueId: q.id })).toBeUndefined();
    await store().jobQueueSettingsPut({ queueId: q.id, settings: { ...defaultJobQueueSettings, maxAttempts: 9 }, nowMs: T0 });
    const { job } = await submit(q);
    await reopen();
    expect((await store().jobQueueSettingsGet({ queueId: q.id }))?.maxAttempts).toBe(9);
    expect((await store().jobGet({ id: job.id }))?.status).toBe("queued");
    expect((await lease(q)).leased.map((j) => j.id)).toEqual([job.id]);
  });
}
