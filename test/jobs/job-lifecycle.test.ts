/** The job state machine through JobService on real SQLite, time moved by hand (ManualClock). */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type JobsHarness, deadLetterDepth, expectCode, openJobsHarness } from "./jobs-harness.js";

let h: JobsHarness;
beforeEach(() => {
  h = openJobsHarness({ random: () => 0.5 });
});
afterEach(async () => {
  await h.close();
});

describe("jobs: the state machine", () => {
  it("submit → lease → complete: queued, running, succeeded, with the output stored", async () => {
    const { job } = await h.jobs.submit("", "embed", { input: { text: "hi" } });
    expect(job).toMatchObject({ status: "queued", attempt: 0, maxAttempts: 3, priority: 0, queueName: "embed", inputJson: '{"text":"hi"}' });
    const [leased] = await h.jobs.lease("", "embed", { max: 10 });
    expect(leased).toMatchObject({ id: job.id, status: "running", attempt: 1 });
    const done = await h.jobs.complete("", job.id, { leaseId: leased!.leaseToken, output: { vector: [1, 2] } });
    expect(done).toMatchObject({ status: "succeeded", outputJson: '{"vector":[1,2]}', finishedAtMs: h.clock.nowMs() });
    expect((await h.jobs.get("", job.id)).status).toBe("succeeded");
    expect(await h.jobs.lease("", "embed", { max: 10 })).toEqual([]); // its message is gone
    await expectCode(h.jobs.complete("", job.id, { leaseId: leased!.leaseToken }), "JobAlreadyFinished");
    await expectCode(h.jobs.cancel("", job.id), "JobAlreadyFinished");
  });

  it("auto-creates the queue with a <name>-dlq dead-letter queue", async () => {
    await h.jobs.submit("", "embed", { input: 1 });
    const info = await h.jobs.queueInfo("", "embed");
    expect(info.deadLetterQueue).toBe("embed-dlq");
    expect(info.stats.jobs.queued).toBe(1);
    expect(info.stats.messages.visible).toBe(1);
    expect(info.stats.deadLetterMessages).toBe(0);
  });

  it("leases higher priorities first, FIFO within a priority", async () => {
    const low = await h.jobs.submit("", "q", { input: "low", priority: 1 });
    const high = await h.jobs.submit("", "q", { input: "high", priority: 9 });
    const mid1 = await h.jobs.submit("", "q", { input: "mid1", priority: 5 });
    const mid2 = await h.jobs.submit("", "q", { input: "mid2", priority: 5 });
    const leased = await h.jobs.lease("", "q", { max: 4 });
    expect(leased.map((j) => j.id)).toEqual([high.job.id, mid1.job.id, mid2.job.id, low.job.id]);
  });

  it("cancels a queued job at once; a running one gets cancelRequested, seen on its heartbeat", async () => {
    const a = await h.jobs.submit("", "q", { input: "a" });
    expect((await h.jobs.cancel("", a.job.id)).status).toBe("canceled");
    expect((await h.jobs.cancel("", a.job.id)).status).toBe("canceled"); // idempotent
    const b = await h.jobs.submit("", "q", { input: "b" });
    const [leased] = await h.jobs.lease("", "q", {});
    expect(leased!.id).toBe(b.job.id); // the canceled job's message was deleted
    expect(await h.jobs.cancel("", b.job.id)).toMatchObject({ status: "running", cancelRequested: true });
    expect((await h.jobs.heartbeat("", b.job.id, { leaseId: leased!.leaseToken })).cancelRequested).toBe(true);
    const ended = await h.jobs.fail("", b.job.id, { leaseId: leased!.leaseToken, error: { message: "aborted" } });
    expect(ended.status).toBe("canceled");
  });

  it("retries with exponential backoff, then fails after maxAttempts with the last error, message in the DLQ", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x", maxAttempts: 3 });
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [leased] = await h.jobs.lease("", "q", {});
      expect(leased).toMatchObject({ id: job.id, attempt });
      const after = await h.jobs.fail("", job.id, { leaseId: leased!.leaseToken, error: { message: `boom ${attempt}`, type: "ModelError" } });
      if (attempt < 3) {
        expect(after.status).toBe("queued");
        const delay = after.availableAtMs! - h.clock.nowMs();
        delays.push(delay);
        expect(await h.jobs.lease("", "q", {})).toEqual([]); // not before its backoff
        h.clock.advance(delay);
      } else {
        expect(after).toMatchObject({ status: "failed", attempt: 3, error: { message: "boom 3", type: "ModelError" } });
      }
    }
    // Full jitter with the draw fixed at 0.5: half of base·2^(attempt−1) seconds.
    expect(delays).toEqual([500, 1000]);
    expect(await deadLetterDepth(h, "q")).toBe(1);
    const dlq = await h.queues.getQueue("", "q-dlq");
    const [message] = await h.queues.receiveMessages(dlq, { maxMessages: 1 });
    expect(message!.body).toBe('"x"');
    expect(message!.messageId).toBe(job.id);
  });

  it("honours retryAfterSeconds", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    const [leased] = await h.jobs.lease("", "q", {});
    const after = await h.jobs.fail("", job.id, { leaseId: leased!.leaseToken, error: { message: "429" }, retryAfterSeconds: 42 });
    expect(after.availableAtMs).toBe(h.clock.nowMs() + 42_000);
  });

  it("a non-retryable error fails the job after one attempt, its message in the DLQ", async () => {
    const { job } = await h.jobs.submit("", "q", { input: { bad: true } });
    const [leased] = await h.jobs.lease("", "q", {});
    const after = await h.jobs.fail("", job.id, { leaseId: leased!.leaseToken, error: { message: "invalid input" }, retryable: false });
    expect(after).toMatchObject({ status: "failed", attempt: 1, error: { message: "invalid input" } });
    expect(await deadLetterDepth(h, "q")).toBe(1);
    expect((await h.jobs.queueInfo("", "q")).stats.jobs.failed).toBe(1);
  });

  it("a job failing for good just after its dead-letter queue was deleted (SQS DeleteQueue) fails with its message deleted, not moved into the deleted queue", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x", maxAttempts: 1 });
    const other = await h.jobs.submit("", "q", { input: "y", maxAttempts: 1 });
    const [leased, leasedOther] = await h.jobs.lease("", "q", { max: 2 });
    await h.queues.deleteQueue("", "q-dlq");
    // Within the few seconds the queue's policy (naming the dead-letter queue) stays cached: a
    // worker's fail, and one reported with the next lease.
    const failed = await h.jobs.fail("", job.id, { leaseId: leased!.leaseToken, error: { message: "boom" }, retryable: false });
    const { acks } = await h.jobs.leaseWithAcks("", "q", { max: 0 }, [{ kind: "fail", id: other.job.id, leaseId: leasedOther!.leaseToken, error: { message: "boom" }, retryable: false }]);
    expect(acks).toMatchObject([{ ok: true, job: { status: "failed" } }]);
    expect(failed).toMatchObject({ status: "failed", error: { message: "boom" } });
    for (const id of [job.id, other.job.id]) {
      expect((await h.jobs.get("", id)).messageSeq).toBeUndefined();
      // Nowhere at all: not in q, and not kept for the deleted queue.
      expect(h.store.db.prepare("SELECT count(*) FROM messages WHERE message_id = ?").pluck().get(id)).toBe(0);
    }
  });

  it("an expired lease (worker died) makes the job leasable again as the next attempt; the old lease is dead", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    const [first] = await h.jobs.lease("", "q", { leaseSeconds: 10 });
    h.clock.advance(10_000);
    expect(await h.jobs.expireLeases()).toBe(1);
    expect(await h.jobs.get("", job.id)).toMatchObject({ status: "queued", attempt: 1, error: { type: "LeaseExpired" } });
    await expectCode(h.jobs.heartbeat("", job.id, { leaseId: first!.leaseToken }), "LeaseExpired");
    const [second] = await h.jobs.lease("", "q", { leaseSeconds: 10 });
    expect(second).toMatchObject({ id: job.id, attempt: 2 });
    await expectCode(h.jobs.complete("", job.id, { leaseId: first!.leaseToken }), "LeaseMismatch");
    expect((await h.jobs.complete("", job.id, { leaseId: second!.leaseToken, output: 1 })).status).toBe("succeeded");
  });

  it("a lease that expired is re-leased even before the sweep notices", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    await h.jobs.lease("", "q", { leaseSeconds: 5 });
    h.clock.advance(5_000);
    const [again] = await h.jobs.lease("", "q", {});
    expect(again).toMatchObject({ id: job.id, attempt: 2, error: { type: "LeaseExpired" } });
  });

  it("an expired lease on the last attempt fails the job", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x", maxAttempts: 1 });
    await h.jobs.lease("", "q", { leaseSeconds: 5 });
    h.clock.advance(5_000);
    await h.jobs.expireLeases();
    expect(await h.jobs.get("", job.id)).toMatchObject({ status: "failed", error: { type: "LeaseExpired" } });
    expect(await deadLetterDepth(h, "q")).toBe(1);
  });

  it("heartbeats keep a job alive well past 3× its lease", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    const [leased] = await h.jobs.lease("", "q", { leaseSeconds: 10 });
    for (let t = 0; t < 40_000; t += 4_000) {
      h.clock.advance(4_000);
      await h.jobs.expireLeases();
      const beat = await h.jobs.heartbeat("", job.id, { leaseId: leased!.leaseToken, progress: Math.min(1, t / 40_000) });
      expect(beat.leaseExpiresAtMs).toBe(h.clock.nowMs() + 10_000);
      expect(await h.jobs.lease("", "q", {})).toEqual([]); // nobody else can take it
    }
    const done = await h.jobs.complete("", job.id, { leaseId: leased!.leaseToken, output: "ok" });
    expect(done).toMatchObject({ status: "succeeded", attempt: 1 });
  });

  it("a running job past timeoutSeconds is failed and retried with backoff", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x", timeoutSeconds: 5 });
    const [leased] = await h.jobs.lease("", "q", { leaseSeconds: 60 });
    h.clock.advance(5_000);
    await expectCode(h.jobs.heartbeat("", job.id, { leaseId: leased!.leaseToken }), "LeaseExpired");
    await h.jobs.expireLeases();
    const after = await h.jobs.get("", job.id);
    expect(after).toMatchObject({ status: "queued", attempt: 1, error: { type: "Timeout" } });
    expect(after.availableAtMs).toBe(h.clock.nowMs() + 500);
    h.clock.advance(500);
    expect((await h.jobs.lease("", "q", {}))[0]).toMatchObject({ id: job.id, attempt: 2 });
  });

  it("rejects a lease id that isn't the job's", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    await h.jobs.lease("", "q", {});
    await expectCode(h.jobs.complete("", job.id, { leaseId: "garbage" }), "LeaseMismatch");
    await expectCode(h.jobs.heartbeat("", "no-such-job", { leaseId: "garbage" }), "JobNotFound");
  });

  it("a released lease puts the job back at once with its attempt given back, even on the last attempt", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x", maxAttempts: 1 });
    const [first] = await h.jobs.lease("", "q", {});
    expect(first).toMatchObject({ id: job.id, attempt: 1 });
    const released = await h.jobs.release("", job.id, { leaseId: first!.leaseToken });
    expect(released).toMatchObject({ status: "queued", attempt: 0, startedAtMs: undefined, availableAtMs: h.clock.nowMs() });
    await expectCode(h.jobs.release("", job.id, { leaseId: first!.leaseToken }), "LeaseExpired"); // that lease is over
    const [again] = await h.jobs.lease("", "q", {});
    expect(again).toMatchObject({ id: job.id, attempt: 1, status: "running" });
    expect(await deadLetterDepth(h, "q")).toBe(0);
    await expectCode(h.jobs.release("", job.id, { leaseId: "garbage" }), "LeaseMismatch");
    expect((await h.jobs.complete("", job.id, { leaseId: again!.leaseToken })).status).toBe("succeeded");
    await expectCode(h.jobs.release("", job.id, { leaseId: again!.leaseToken }), "JobAlreadyFinished");
  });

  it("releasing a job whose cancel was requested cancels it", async () => {
    const { job } = await h.jobs.submit("", "q", { input: "x" });
    const [leased] = await h.jobs.lease("", "q", {});
    await h.jobs.cancel("", job.id);
    expect((await h.jobs.release("", job.id, { leaseId: leased!.leaseToken })).status).toBe("canceled");
    expect(await h.jobs.lease("", "q", {})).toEqual([]);
  });
});
