/** Waiting and the less common paths: ?wait, long-poll leases, batch windows, idempotency, redrive, adoption, pruning, restart. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { settle, settlesAfter } from "../core/service-harness.js";
import { type JobsHarness, deadLetterDepth, expectCode, openJobsHarness } from "./jobs-harness.js";

let h: JobsHarness;
beforeEach(() => {
  h = openJobsHarness();
});
afterEach(async () => {
  await h.close();
});

describe("jobs: waiting", () => {
  it("wait(id, N) is woken by the completion itself, not by time", async () => {
    const { job } = await h.jobs.submit("", "q", { input: 1 });
    let settled = false;
    const waiting = h.jobs.wait("", job.id, 60).finally(() => (settled = true));
    const [leased] = await h.jobs.lease("", "q", {});
    await settle();
    expect(settled).toBe(false);
    await h.jobs.complete("", job.id, { leaseId: leased!.leaseToken, output: "done" });
    const done = await waiting;
    expect(done).toMatchObject({ status: "succeeded", outputJson: '"done"' });
    expect(h.clock.pendingTimers()).toBe(0); // its timer was cancelled
  });

  it("wait returns the current state when N seconds pass first", async () => {
    const { job } = await h.jobs.submit("", "q", { input: 1 });
    const waiting = h.jobs.wait("", job.id, 5);
    await settle();
    h.clock.advance(5_000);
    expect((await waiting).status).toBe("queued");
  });

  it("wait on a job that is already terminal answers at once; close() releases waits", async () => {
    const { job } = await h.jobs.submit("", "q", { input: 1 });
    await h.jobs.cancel("", job.id);
    expect((await h.jobs.wait("", job.id, 60)).status).toBe("canceled");
    const other = await h.jobs.submit("", "q", { input: 2 });
    const waiting = h.jobs.wait("", other.job.id, 60);
    await settle();
    h.jobs.close();
    expect((await waiting).status).toBe("queued");
  });

  it("a long-polling lease is woken by a submit", async () => {
    await h.jobs.lease("", "q", {}); // creates the queue
    const leasing = h.jobs.lease("", "q", { waitSeconds: 20 });
    await settle();
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    const leased = await leasing;
    expect(leased.map((j) => j.id)).toEqual([job.id]);
  });

  it("a submit runs a parked long-poll lease in its own write: one commit, events in order", async () => {
    await h.jobs.lease("", "q", {}); // creates the queue
    const events: string[] = [];
    h.jobs.events.subscribe({ queueName: "q" }, (e) => events.push(e.type));
    const leasing = h.jobs.lease("", "q", { waitSeconds: 20 });
    await settle();
    const commits = h.store.writes.transactions;
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    // The submit's own answer already says so (examples/README.md shows it).
    expect([job.status, job.attempt]).toEqual(["running", 1]);
    const leased = await leasing;
    expect(leased.map((j) => [j.id, j.status, j.attempt])).toEqual([[job.id, "running", 1]]);
    expect(h.store.writes.transactions - commits).toBe(1);
    expect(events).toEqual(["job.queued", "job.started"]);
    expect((await h.jobs.get("", job.id)).leaseToken).toBe(leased[0]!.leaseToken);
  });

  it("a parked lease whose request went away is not given a job; the next poller gets it", async () => {
    await h.jobs.lease("", "q", {});
    const gone = new AbortController();
    const leasing = h.jobs.lease("", "q", { waitSeconds: 20, signal: gone.signal });
    await settle();
    gone.abort();
    expect(await leasing).toEqual([]);
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    expect((await h.jobs.get("", job.id)).status).toBe("queued");
    expect((await h.jobs.lease("", "q", {})).map((j) => j.id)).toEqual([job.id]);
  });

  it("an idempotent replay creates nothing, so a parked lease it took keeps waiting for a real job", async () => {
    await h.jobs.lease("", "q", {});
    const first = await h.jobs.submit("", "q", { input: "x" }, "key-1");
    await h.jobs.lease("", "q", {}); // takes the first job out of the way
    const leasing = h.jobs.lease("", "q", { waitSeconds: 20 });
    await settle();
    const replay = await h.jobs.submit("", "q", { input: "x" }, "key-1");
    expect(replay).toMatchObject({ replayed: true, job: { id: first.job.id } });
    await settle(10);
    const { job } = await h.jobs.submit("", "q", { input: "y" });
    expect((await leasing).map((j) => j.id)).toEqual([job.id]);
  });

  it("a long-polling lease gets a delayed job when its delay ends, not when the wait does", async () => {
    await h.jobs.lease("", "q", {});
    const leasing = h.jobs.lease("", "q", { waitSeconds: 20 });
    await settle();
    const { job } = await h.jobs.submit("", "q", { input: "later", delaySeconds: 2 });
    expect((await settlesAfter(h.clock, 2_000, leasing)).map((j) => j.id)).toEqual([job.id]);
  });

  it("a long-polling lease gets a retried job when its backoff ends", async () => {
    await h.jobs.updateQueueSettings("", "q", { backoff: { baseSeconds: 4, capSeconds: 4 } });
    const { job } = await h.jobs.submit("", "q", { input: "flaky", maxAttempts: 2 });
    const [first] = await h.jobs.lease("", "q", {});
    const leasing = h.jobs.lease("", "q", { waitSeconds: 20 });
    await settle();
    const failed = await h.jobs.fail("", job.id, { leaseId: first!.leaseToken!, error: { message: "try again" } });
    expect(failed.status).toBe("queued");
    const retryInMs = failed.availableAtMs! - h.clock.nowMs();
    expect(retryInMs).toBeGreaterThan(0);
    expect((await settlesAfter(h.clock, retryInMs, leasing)).map((j) => j.id)).toEqual([job.id]);
  });

  it("a long-polling lease returns empty when its wait passes", async () => {
    const leasing = h.jobs.lease("", "q", { waitSeconds: 3 });
    await settle(10);
    h.clock.advance(3_000);
    expect(await leasing).toEqual([]);
  });

  it("batchWindowMs gathers up to max after the first job, and returns at the window's end otherwise", async () => {
    await h.jobs.lease("", "q", {});
    const full = h.jobs.lease("", "q", { max: 3, waitSeconds: 20, batchWindowMs: 1_000 });
    await settle();
    await h.jobs.submit("", "q", { input: 1 });
    await settle(10);
    await h.jobs.submit("", "q", { input: 2 });
    await h.jobs.submit("", "q", { input: 3 });
    expect((await full).length).toBe(3);

    const partial = h.jobs.lease("", "q", { max: 3, waitSeconds: 20, batchWindowMs: 1_000 });
    await settle();
    await h.jobs.submit("", "q", { input: 4 });
    await settle(10);
    h.clock.advance(1_000);
    expect((await partial).length).toBe(1);
  });
});

describe("jobs: idempotency keys", () => {
  it("same key + same body → the same job (replayed); other body → IdempotencyKeyReused; after 24 h the key is free", async () => {
    const first = await h.jobs.submit("", "q", { input: { a: 1, b: 2 }, priority: 3 }, "key-1");
    const again = await h.jobs.submit("", "q", { priority: 3, input: { b: 2, a: 1 } }, "key-1"); // key order doesn't matter
    expect(again).toMatchObject({ replayed: true, job: { id: first.job.id } });
    await expectCode(h.jobs.submit("", "q", { input: { a: 1, b: 3 } }, "key-1"), "IdempotencyKeyReused");
    // Keys are per queue.
    expect((await h.jobs.submit("", "other", { input: { a: 1, b: 3 } }, "key-1")).replayed).toBe(false);
    h.clock.advance(24 * 3_600_000);
    const later = await h.jobs.submit("", "q", { input: { a: 1, b: 3 } }, "key-1");
    expect(later.replayed).toBe(false);
    expect(later.job.id).not.toBe(first.job.id);
    await h.jobs.prune();
  });
});

describe("jobs: redrive, adoption, retention, restart", () => {
  it("a failed job whose message is redriven from the DLQ runs again, attempts starting over", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x", maxAttempts: 1 });
    const [leased] = await h.jobs.lease("", "q", {});
    await h.jobs.fail("", job.id, { leaseId: leased!.leaseToken, error: { message: "bad" } });
    const dlq = await h.queues.getQueue("", "q-dlq");
    const source = await h.queues.getQueue("", "q");
    await h.store.messageMove({ sourceQueueId: dlq.id, destinationQueueId: source.id, max: 10, nowMs: h.clock.nowMs(), minSentAtMs: 0 });
    const [again] = await h.jobs.lease("", "q", {});
    expect(again).toMatchObject({ id: job.id, status: "running", attempt: 1, error: { message: "bad" } });
    expect((await h.jobs.complete("", job.id, { leaseId: again!.leaseToken, output: 1 })).status).toBe("succeeded");
  });

  it("a worker leasing from <queue>-dlq runs a failed job again in place; failing for good again deletes its message", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x", maxAttempts: 1 });
    const [leased] = await h.jobs.lease("", "q", {});
    await h.jobs.fail("", job.id, { leaseId: leased!.leaseToken, error: { message: "bad" } });
    expect(await deadLetterDepth(h, "q")).toBe(1);
    const [again] = await h.jobs.lease("", "q-dlq", {});
    expect(again).toMatchObject({ id: job.id, queueName: "q", status: "running", attempt: 1 });
    const failed = await h.jobs.fail("", job.id, { leaseId: again!.leaseToken, error: { message: "worse" }, retryable: false });
    expect(failed).toMatchObject({ status: "failed", error: { message: "worse" } });
    expect(await deadLetterDepth(h, "q")).toBe(0);
    expect(await h.jobs.lease("", "q-dlq", {})).toEqual([]);
  });

  it("a message sent through the SQS API to a job queue is adopted as a job", async () => {
    await h.jobs.lease("", "q", {});
    const queue = await h.queues.getQueue("", "q");
    const sent = await h.queues.sendMessage(queue, { body: '{"text":"from sqs"}', priority: 4 });
    const plain = await h.queues.sendMessage(queue, { body: "not json" });
    const leased = await h.jobs.lease("", "q", { max: 2 });
    expect(leased.map((j) => [j.id, j.inputJson, j.priority])).toEqual([
      [sent.messageId, '{"text":"from sqs"}', 4],
      [plain.messageId, '"not json"', 0],
    ]);
  });

  it("finished jobs are pruned after the queue's resultTtlSeconds; unfinished ones never", async () => {
    await h.jobs.updateQueueSettings("", "q", { resultTtlSeconds: 60 });
    const done = await h.jobs.submit("", "q", { input: 1 });
    const waiting = await h.jobs.submit("", "q", { input: 2, delaySeconds: 3_600 });
    const [leased] = await h.jobs.lease("", "q", {});
    await h.jobs.complete("", done.job.id, { leaseId: leased!.leaseToken });
    h.clock.advance(59_000);
    expect(await h.jobs.prune()).toBe(0);
    h.clock.advance(1_000);
    expect(await h.jobs.prune()).toBe(1);
    await expectCode(h.jobs.get("", done.job.id), "JobNotFound");
    expect((await h.jobs.get("", waiting.job.id)).status).toBe("queued");
  });

  it("a finished job is kept while its Idempotency-Key holds, so a replay finds it rather than creating another", async () => {
    await h.jobs.updateQueueSettings("", "q", { resultTtlSeconds: 60 });
    const { job } = await h.jobs.submit("", "q", { input: "pay" }, "key-pay");
    const [leased] = await h.jobs.lease("", "q", {});
    await h.jobs.complete("", job.id, { leaseId: leased!.leaseToken });
    h.clock.advance(3 * 60_000);
    expect(await h.jobs.prune()).toBe(0);
    expect(await h.jobs.submit("", "q", { input: "pay" }, "key-pay")).toMatchObject({ replayed: true, job: { id: job.id, status: "succeeded" } });
    expect(await h.jobs.lease("", "q", {})).toEqual([]); // nothing to run twice
    h.clock.advance(24 * 3_600_000);
    expect(await h.jobs.prune()).toBe(1); // the key expired: the job goes (and the key with it)
    await expectCode(h.jobs.get("", job.id), "JobNotFound");
  });

  it("a queued job whose message passes the queue's retention ends failed (MessageExpired), not queued forever", async () => {
    const { queue } = await h.queues.createQueue("", { name: "short", config: { messageRetentionPeriodSeconds: 60 } });
    const { job } = await h.jobs.submit("", "short", { input: "x" });
    h.clock.advance(61_000);
    expect(await h.jobs.lease("", "short", {})).toEqual([]); // past retention: no lease takes it
    expect(await h.queues.expireMessages(queue)).toBe(1);
    expect(await h.jobs.get("", job.id)).toMatchObject({ status: "failed", error: { type: "MessageExpired" }, finishedAtMs: h.clock.nowMs() });
    // Retention counts from when a job is due: one delayed past the retention period still runs.
    const { job: later } = await h.jobs.submit("", "short", { input: "y", delaySeconds: 120 });
    h.clock.advance(120_000);
    expect((await h.jobs.lease("", "short", {})).map((l) => l.id)).toEqual([later.id]);
  });

  it("an SQS PurgeQueue of a job queue cancels its live jobs (QueuePurged); their workers are told the job is finished", async () => {
    const a = await h.jobs.submit("", "q", { input: "a" });
    const b = await h.jobs.submit("", "q", { input: "b" });
    const [leased] = await h.jobs.lease("", "q", {});
    expect(leased!.id).toBe(a.job.id);
    await h.queues.purgeQueue("", "q");
    for (const id of [a.job.id, b.job.id]) expect(await h.jobs.get("", id)).toMatchObject({ status: "canceled", error: { type: "QueuePurged" } });
    await expectCode(h.jobs.complete("", a.job.id, { leaseId: leased!.leaseToken }), "JobAlreadyFinished");
  });

  it("the jobs a purge ends are published: waits and held submits wake at once, subscribers hear job.canceled", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "a" });
    const canceled: string[] = [];
    h.jobs.events.subscribe({ queueName: "q" }, (e) => {
      if (e.type === "job.canceled") canceled.push(e.job.id);
    });
    let waited: unknown;
    let held: unknown;
    void h.jobs.wait("", job.id, 60).then((j) => (waited = j));
    void h.jobs.submitAndWait("", "q", { input: "b" }, undefined, 60).then((r) => (held = r.job));
    await settle(10);
    expect([waited, held]).toEqual([undefined, undefined]);
    await h.queues.purgeQueue("", "q"); // the clock never moves: only the purge can end these holds
    await settle();
    expect(waited).toMatchObject({ id: job.id, status: "canceled", error: { type: "QueuePurged" } });
    expect(held).toMatchObject({ status: "canceled", error: { type: "QueuePurged" } });
    expect(canceled.sort()).toEqual([job.id, (held as { id: string }).id].sort());
    expect(h.clock.pendingTimers()).toBe(0); // both holds' timers were cancelled
  });

  it("the jobs retention ends are published: a held wait wakes at once, subscribers hear job.failed", async () => {
    const { queue } = await h.queues.createQueue("", { name: "short", config: { messageRetentionPeriodSeconds: 60 } });
    const { job } = await h.jobs.submit("", "short", { input: "x" });
    h.clock.advance(59_000);
    const events: string[] = [];
    h.jobs.events.subscribe({ jobId: job.id }, (e) => events.push(e.type));
    let waited: unknown;
    void h.jobs.wait("", job.id, 60).then((j) => (waited = j));
    h.clock.advance(2_000);
    await settle(10);
    expect(waited).toBeUndefined();
    expect(await h.queues.expireMessages(queue)).toBe(1);
    await settle();
    expect(waited).toMatchObject({ id: job.id, status: "failed", error: { type: "MessageExpired" } });
    expect(events).toEqual(["job.failed"]);
    expect(h.clock.pendingTimers()).toBe(0);
  });

  it("an SQS DeleteQueue of a job queue answers waits and held submits on its jobs at once (JobNotFound) and tells job subscribers they are gone", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "a" });
    await h.jobs.submit("", "other", { input: "elsewhere" });
    const base = h.jobs.events.listenerCount();
    const gone: string[] = [];
    h.jobs.events.subscribe(
      { jobId: job.id },
      () => {},
      () => gone.push(job.id),
    );
    const outcome = (p: Promise<unknown>): Promise<unknown> =>
      p.then(
        (v) => v,
        (e: unknown) => (e as { code?: string }).code,
      );
    let waited: unknown;
    let held: unknown;
    void outcome(h.jobs.wait("", job.id, 60)).then((v) => (waited = v));
    void outcome(h.jobs.submitAndWait("", "q", { input: "b" }, undefined, 60)).then((v) => (held = v));
    await settle(10);
    expect([waited, held]).toEqual([undefined, undefined]);
    expect(h.jobs.events.listenerCount()).toBe(base + 3);
    await h.queues.deleteQueue("", "q"); // the clock never moves: only the delete can end these holds
    await settle();
    // As a hold answers when its limit passes and the job has gone meanwhile.
    expect([waited, held]).toEqual(["JobNotFound", "JobNotFound"]);
    expect(gone).toEqual([job.id]);
    // Nothing left behind: both holds' timers cancelled and their subscriptions removed.
    expect(h.clock.pendingTimers()).toBe(0);
    expect(h.jobs.events.listenerCount()).toBe(base + 1);
  });

  it("queue settings validate and merge", async () => {
    const info = await h.jobs.updateQueueSettings("", "q", { maxAttempts: 7, backoff: { capSeconds: 60 }, timeoutSeconds: 30 });
    expect(info.settings).toEqual({ maxAttempts: 7, backoff: { baseSeconds: 1, capSeconds: 60 }, leaseSeconds: 30, timeoutSeconds: 30, resultTtlSeconds: 604_800, drainTargetSeconds: 300, workerConcurrency: 1 });
    expect((await h.jobs.updateQueueSettings("", "q", { timeoutSeconds: null })).settings.timeoutSeconds).toBeUndefined();
    await expectCode(h.jobs.updateQueueSettings("", "q", { backoff: { baseSeconds: 100, capSeconds: 10 } }), "ValidationFailed");
    const { job } = await h.jobs.submit("", "q", { input: 1 });
    expect(job.maxAttempts).toBe(7);
  });

  it("jobs survive a restart: queued, running and their leases", async () => {
    const a = await h.jobs.submit("", "q", { input: "a" });
    const b = await h.jobs.submit("", "q", { input: "b" });
    const [leased] = await h.jobs.lease("", "q", {});
    await h.restart();
    expect((await h.jobs.get("", b.job.id)).status).toBe("queued");
    expect((await h.jobs.complete("", a.job.id, { leaseId: leased!.leaseToken, output: "ok" })).status).toBe("succeeded");
    expect((await h.jobs.lease("", "q", {}))[0]!.id).toBe(b.job.id);
  });

  it("rejects .fifo job queues and bad inputs with ValidationFailed", async () => {
    await expectCode(h.jobs.submit("", "q.fifo", { input: 1 }), "ValidationFailed");
    await expectCode(h.jobs.submit("", "q", { input: 1, priority: 10 }), "ValidationFailed");
    await expectCode(h.jobs.submit("", "q", { input: 1, webhook: { url: "ftp://x" } }), "ValidationFailed");
    await expectCode(h.jobs.submit("", "q", { input: 1, webhook: { url: "https://x.example", events: ["job.nope"] } }), "ValidationFailed");
    await expectCode(h.jobs.lease("", "q", { max: 101 }), "ValidationFailed");
    await expectCode(h.jobs.submit("", "q", { input: "x".repeat(1_048_577) }), "MessageTooLong");
  });
});

describe("jobs: queues made through the SQS API", () => {
  it("a DLQ that already exists with other attributes is used as it is", async () => {
    await h.queues.createQueue("", { name: "made-dlq", config: { visibilityTimeoutSeconds: 5 } });
    await h.jobs.submit("", "made", { input: 1 });
    expect((await h.jobs.queueInfo("", "made")).deadLetterQueue).toBe("made-dlq");
    expect((await h.queues.getQueue("", "made-dlq")).config.visibilityTimeoutSeconds).toBe(5);
  });

  it("a queue without a RedrivePolicy runs jobs; a failed job's message is then deleted", async () => {
    await h.queues.createQueue("", { name: "plain" });
    const { job } = await h.jobs.submit("", "plain", { input: 1, maxAttempts: 1 });
    const [leased] = await h.jobs.lease("", "plain", {});
    expect((await h.jobs.fail("", job.id, { leaseId: leased!.leaseToken, error: { message: "x" } })).status).toBe("failed");
    const info = await h.jobs.queueInfo("", "plain");
    expect(info.deadLetterQueue).toBeUndefined();
    expect(info.stats.messages).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });
});
