/**
 * Conformance cases for what the admin routes and the dashboard need of a store: a peek that
 * reads messages without changing them (messagePeek), and an operator's retry of a finished job
 * (jobRetry).
 */
import { expect } from "vitest";
import { SluiceError } from "../../core/errors.js";
import { jobMessage } from "../../core/jobs/job-message.js";
import type { RetryPolicy } from "../../core/job-store.js";
import { defaultQueueConfig, type QueueRecord } from "../../core/queue.js";
import { type ConformanceContext, T0, newMessage, act } from "./conformance-context.js";
import { newJobFor } from "./conformance-jobs-kit.js";
import { messageDelete, messageReceive, messageSend } from "./one-call.js";

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  return error instanceof SluiceError ? error.code : `not a SluiceError: ${String(error)}`;
}

export function registerAdminCases({ store, test }: ConformanceContext): void {
  async function makeQueue(name: string): Promise<QueueRecord> {
    return (await store().queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 })).queue;
  }

  test("messagePeek reads visible, then in-flight and delayed messages, and changes none of them", async () => {
    const q = await makeQueue("q");
    const other = await makeQueue("other");
    const bin = new Uint8Array([0, 255]);
    await messageSend(store(), { queueId: other.id, messages: [newMessage({ body: "elsewhere" })] });
    await messageSend(store(), {
      queueId: q.id,
      messages: [
        newMessage({ body: "leased", visibleAtMs: T0 }),
        newMessage({ body: "delayed", visibleAtMs: T0 + 60_000 }),
        newMessage({ body: "expired", sentAtMs: T0 - 10_000, visibleAtMs: T0 - 10_000 }),
        newMessage({ body: "ready", visibleAtMs: T0 + 1, attributes: { b: { dataType: "Binary", binaryValue: bin } } }),
      ],
    });
    // The oldest visible message within retention ("expired" is past it) is leased: in flight until T0 + 30 s.
    const [leased] = (await messageReceive(store(), { queueId: q.id, max: 1, nowMs: T0 + 5, visibleUntilMs: T0 + 30_000, minSentAtMs: T0 - 5_000, receiptToken: "tok-peek-1" })).messages;
    expect(leased!.body).toBe("leased");

    const peek = () => store().messagePeek({ queueId: q.id, minSentAtMs: T0 - 5_000, limit: 10 });
    const first = await peek();
    expect(first.map((m) => [m.body, m.visibleAtMs, m.receiveCount])).toEqual([
      ["ready", T0 + 1, 0],
      ["leased", T0 + 30_000, 1],
      ["delayed", T0 + 60_000, 0],
    ]);
    expect(Array.from(first[0]!.attributes.b!.binaryValue!)).toEqual([0, 255]);
    expect(first[1]!.messageId).toBe(leased!.messageId);
    expect(await peek()).toEqual(first);
    expect((await store().messagePeek({ queueId: q.id, minSentAtMs: T0 - 5_000, limit: 2 })).map((m) => m.body)).toEqual(["ready", "leased"]);

    // Nothing changed: the next receive gets "ready" as a first receive, "leased" stays hidden with its receipt.
    const [next] = (await messageReceive(store(), { queueId: q.id, max: 10, nowMs: T0 + 10, visibleUntilMs: T0 + 20, minSentAtMs: T0 - 5_000, receiptToken: "tok-peek-2" })).messages;
    expect([next!.body, next!.receiveCount]).toEqual(["ready", 1]);
    expect(await messageDelete(store(), { queueId: q.id, receipts: [{ seq: leased!.seq, token: "tok-peek-1" }] })).toEqual({ deleted: [true], groupsReady: 0 });
  });

  const failFor = (dlq?: QueueRecord): RetryPolicy => ({
    backoff: { baseSeconds: 1, capSeconds: 10 },
    random: 0.5,
    deadLetterQueueId: dlq?.id,
    deadLetterSourceQueueName: "jobs",
    resultTtlSeconds: 60,
  });

  async function submitAndLease(queue: QueueRecord, nowMs: number) {
    const { job, message } = newJobFor(queue);
    await store().jobCreateMany({ items: [{ job, message }], nowMs: T0 });
    const token = `${queue.id}.tok-${nowMs}`;
    const r = await store().jobLease({ ...failFor(), queueId: queue.id, queueName: queue.name, max: 1, nowMs, leaseSeconds: 30, minSentAtMs: 0, leaseToken: token, adopt: { maxAttempts: 3 } });
    expect(r.leased.map((j) => j.id)).toEqual([job.id]);
    return { id: job.id, token };
  }

  const retryMessage = (queue: QueueRecord, id: string, inputJson: string, nowMs: number) =>
    jobMessage({ queue, jobId: id, inputJson, priority: 0, availableAtMs: nowMs, senderId: "000000000000" });

  test("jobRetry queues a failed job again with a fresh message, and deletes its dead-lettered one", async () => {
    const q = await makeQueue("jobs");
    const dlq = await makeQueue("jobs-dlq");
    const { id, token } = await submitAndLease(q, T0 + 1);
    const failed = await act(store(), { kind: "fail", ...failFor(dlq), id, leaseToken: token, nowMs: T0 + 2, error: { message: "boom" }, retryable: false });
    expect(failed.job.status).toBe("failed");
    expect((await store().queueStats({ queueId: dlq.id, nowMs: T0 + 3, minSentAtMs: 0 })).visible).toBe(1);

    const retried = await store().jobRetry({ id, nowMs: T0 + 10, message: retryMessage(q, id, failed.job.inputJson, T0 + 10) });
    expect(retried.events).toEqual(["job.queued"]);
    expect(retried.job).toMatchObject({ id, status: "queued", attempt: 0, availableAtMs: T0 + 10, updatedAtMs: T0 + 10, finishedAtMs: undefined, expiresAtMs: undefined, error: { message: "boom" } });
    expect(await store().jobGet({ id })).toMatchObject({ status: "queued", attempt: 0, messageSeq: retried.job.messageSeq });
    expect(await store().queueStats({ queueId: dlq.id, nowMs: T0 + 11, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0, delayed: 0 });
    // It runs again from its own queue, once: one message, a first attempt.
    const again = await store().jobLease({ ...failFor(dlq), queueId: q.id, queueName: q.name, max: 10, nowMs: T0 + 12, leaseSeconds: 30, minSentAtMs: 0, leaseToken: `${q.id}.tok-again`, adopt: { maxAttempts: 3 } });
    expect(again.leased.map((j) => [j.id, j.attempt, j.inputJson])).toEqual([[id, 1, failed.job.inputJson]]);
  });

  test("jobRetry queues a canceled job again; any other status is JobNotRetryable and changes nothing", async () => {
    const q = await makeQueue("jobs");
    const { job, message } = newJobFor(q);
    await store().jobCreateMany({ items: [{ job, message }], nowMs: T0 });
    expect(await codeOf(store().jobRetry({ id: job.id, nowMs: T0 + 1, message: retryMessage(q, job.id, job.inputJson, T0 + 1) }))).toBe("JobNotRetryable");
    expect((await act(store(), { kind: "cancel", id: job.id, nowMs: T0 + 2, resultTtlSeconds: 60 })).job.status).toBe("canceled");
    expect((await store().queueStats({ queueId: q.id, nowMs: T0 + 3, minSentAtMs: 0 })).visible).toBe(0);
    const retried = await store().jobRetry({ id: job.id, nowMs: T0 + 4, message: retryMessage(q, job.id, job.inputJson, T0 + 4) });
    expect(retried.job).toMatchObject({ status: "queued", cancelRequested: false });
    expect((await store().queueStats({ queueId: q.id, nowMs: T0 + 5, minSentAtMs: 0 })).visible).toBe(1);

    const running = await submitAndLease(await makeQueue("busy"), T0 + 6);
    const before = await store().jobGet({ id: running.id });
    const busy = (await store().queueGet({ name: "busy" }))!;
    expect(await codeOf(store().jobRetry({ id: running.id, nowMs: T0 + 7, message: retryMessage(busy, running.id, before!.inputJson, T0 + 7) }))).toBe("JobNotRetryable");
    expect(await store().jobGet({ id: running.id })).toEqual(before);
    expect(await store().queueStats({ queueId: busy.id, nowMs: T0 + 8, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 1 });
    expect(await codeOf(store().jobRetry({ id: "no-such-job", nowMs: T0 + 9, message: retryMessage(busy, "no-such-job", "{}", T0 + 9) }))).toBe("JobNotFound");
  });
}
