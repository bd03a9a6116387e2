/**
 * The admin routes over HTTP on a real listening server (manual clock): docs/admin-api.md. Every
 * answer is checked against /openapi.json by the harness.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Json, type JobsServer, openEventStream, startJobsServer } from "../jobs/http-harness.js";

let s: JobsServer;
beforeEach(async () => {
  s = await startJobsServer();
});
afterEach(async () => {
  await s.stop();
});

async function ok(method: string, path: string, body?: unknown, status = 200): Promise<Json> {
  const res = await s.api(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

async function errorCode(method: string, path: string, body?: unknown): Promise<[number, string]> {
  const res = await s.api(method, path, body);
  return [res.status, res.body.error?.code];
}

/** A job on `queue` that failed for good: its message sits in `<queue>-dlq`. */
async function failedJob(queue: string, input: unknown = { n: 1 }): Promise<string> {
  const { job } = await ok("POST", `/v1/queues/${queue}/jobs`, { input, maxAttempts: 1 }, 201);
  const [leased] = (await ok("POST", `/v1/queues/${queue}/leases`, { max: 1 })).jobs;
  expect(leased.id).toBe(job.id);
  await ok("POST", `/v1/jobs/${job.id}/fail`, { leaseId: leased.leaseId, error: { message: "boom" }, retryable: false });
  return job.id;
}

describe("GET /v1/queues", () => {
  it("lists every queue, FIFO and SQS-made ones too, in name order, a page at a time, with the stats of GET /v1/queues/{queue}", async () => {
    for (const name of ["b", "a", "c"]) await s.server.queues.createQueue("", { name });
    await s.server.queues.createQueue("", { name: "f.fifo", config: { fifoQueue: true } });
    await ok("POST", "/v1/queues/a/messages", { body: "one" }, 201);
    const first = await ok("GET", "/v1/queues?limit=2");
    expect(first.queues.map((q: Json) => q.name)).toEqual(["a", "b"]);
    expect(first.queues[0]).toEqual(await ok("GET", "/v1/queues/a").then((b) => b.queue));
    expect(first.queues[0].stats.messages).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
    expect(first.queues[0].attributes).toMatchObject({ fifo: false, visibilityTimeoutSeconds: 30, redrivePolicy: null });
    const second = await ok("GET", `/v1/queues?limit=2&cursor=${first.nextCursor}`);
    expect(second).toMatchObject({ nextCursor: null });
    expect(second.queues.map((q: Json) => [q.name, q.attributes.fifo])).toEqual([
      ["c", false],
      ["f.fifo", true],
    ]);
    expect((await ok("GET", "/v1/queues?prefix=f")).queues.map((q: Json) => q.name)).toEqual(["f.fifo"]);
    expect((await ok("GET", "/v1/queues")).nextCursor).toBeNull();
  });

  it("refuses a cursor it did not give and a limit out of range, with 400 ValidationFailed", async () => {
    expect(await errorCode("GET", "/v1/queues?cursor=not-ours!")).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("GET", "/v1/queues?limit=0")).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("GET", "/v1/queues?limit=101")).toEqual([400, "ValidationFailed"]);
  });

  it("counts throughput per bucket: messages sent and completed (deleted, or jobs that finished)", async () => {
    await ok("POST", "/v1/queues/work/jobs", { input: 1 }, 201);
    await ok("POST", "/v1/queues/work/jobs", { input: 2 }, 201);
    const [leased] = (await ok("POST", "/v1/queues/work/leases", { max: 1 })).jobs;
    await ok("POST", `/v1/jobs/${leased.id}/complete`, { leaseId: leased.leaseId, output: null });
    // The bucket in progress isn't reported: once it has passed, it is the newest one.
    s.clock.advance(5_000);
    const { throughput } = (await ok("GET", "/v1/queues/work")).queue.stats;
    expect(throughput.bucketSeconds).toBe(5);
    expect(throughput.sent.at(-1)).toBe(2);
    expect(throughput.completed.at(-1)).toBe(1);
    expect(throughput.sent.slice(0, -1).every((n: number) => n === 0)).toBe(true);
    s.clock.advance(5_000);
    expect((await ok("GET", "/v1/queues/work")).queue.stats.throughput.sent.slice(-2)).toEqual([2, 0]);
  });
});

describe("peek and send", () => {
  it("peeks at bodies and attributes without changing visibility or receive counts", async () => {
    await s.server.queues.createQueue("", { name: "q" });
    const sent = await ok("POST", "/v1/queues/q/messages", { body: "hello", messageAttributes: { kind: { dataType: "String", stringValue: "test" }, raw: { dataType: "Binary", binaryValue: "AAH/" } } }, 201);
    expect(sent.message).toMatchObject({ md5OfBody: "5d41402abc4b2a76b9719d911017c592", sequenceNumber: null });
    await ok("POST", "/v1/queues/q/messages", { body: "later", delaySeconds: 60 }, 201);
    await ok("POST", "/v1/queues/q/messages", { body: "taken" }, 201);
    const queue = await s.server.queues.getQueue("", "q");
    // "hello" (the oldest) is received: in flight for 30 s.
    const [received] = await s.server.queues.receiveMessages(queue, { maxMessages: 1 });
    expect(received!.body).toBe("hello");

    const peek = await ok("GET", "/v1/queues/q/messages?limit=10");
    expect(peek.messages.map((m: Json) => [m.body, m.state, m.receiveCount])).toEqual([
      ["taken", "visible", 0],
      ["hello", "inFlight", 1],
      ["later", "delayed", 0],
    ]);
    const hello = peek.messages[1];
    expect(hello).toMatchObject({
      messageId: sent.message.messageId,
      messageAttributes: { kind: { dataType: "String", stringValue: "test" }, raw: { dataType: "Binary", binaryValue: "AAH/" } },
      attributes: { ApproximateReceiveCount: "1", SenderId: "000000000000", SentTimestamp: String(s.clock.nowMs()) },
      sentAt: new Date(s.clock.nowMs()).toISOString(),
      visibleAt: new Date(s.clock.nowMs() + 30_000).toISOString(),
    });
    expect((await ok("GET", "/v1/queues/q/messages?limit=1")).messages.map((m: Json) => m.body)).toEqual(["taken"]);
    expect(await ok("GET", "/v1/queues/q/messages")).toEqual(peek);
    // Nothing changed: "taken" comes as a first receive, and "hello"'s receipt still deletes it.
    const [next] = await s.server.queues.receiveMessages(queue, { maxMessages: 10 });
    expect([next!.body, next!.receiveCount]).toEqual(["taken", 1]);
    expect((await s.server.queues.deleteMessages(queue, [received!.receiptHandle]))[0]!.ok).toBe(true);
  });

  it("shows a FIFO message's group, dedup id and sequence number; sends need what SQS needs", async () => {
    await s.server.queues.createQueue("", { name: "f.fifo", config: { fifoQueue: true } });
    expect((await s.api("POST", "/v1/queues/f.fifo/messages", { body: "x" })).status).toBe(400);
    const sent = await ok("POST", "/v1/queues/f.fifo/messages", { body: "x", messageGroupId: "g1", messageDeduplicationId: "d1" }, 201);
    expect(sent.message.sequenceNumber).toMatch(/^\d{20}$/);
    const [m] = (await ok("GET", "/v1/queues/f.fifo/messages")).messages;
    expect(m.attributes).toMatchObject({ MessageGroupId: "g1", MessageDeduplicationId: "d1", SequenceNumber: sent.message.sequenceNumber });
  });

  it("refuses bad sends with specific errors, and sends nothing", async () => {
    await s.server.queues.createQueue("", { name: "q", config: { maximumMessageSizeBytes: 1024 } });
    expect(await errorCode("POST", "/v1/queues/q/messages", { body: "x", messageAttributes: { b: { dataType: "Binary", binaryValue: "not base64!" } } })).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("POST", "/v1/queues/q/messages", { body: "x", extra: 1 })).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("POST", "/v1/queues/q/messages", { body: "x".repeat(2000) })).toEqual([413, "MessageTooLong"]);
    expect(await errorCode("POST", "/v1/queues/q/messages", { body: "bad \u0000 char" })).toEqual([400, "InvalidMessageContents"]);
    expect(await errorCode("POST", "/v1/queues/q/messages", { body: "x", delaySeconds: 901 })).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("POST", "/v1/queues/nope/messages", { body: "x" })).toEqual([404, "QueueNotFound"]);
    expect(await errorCode("GET", "/v1/queues/nope/messages")).toEqual([404, "QueueNotFound"]);
    expect(await errorCode("GET", "/v1/queues/q/messages?limit=101")).toEqual([400, "ValidationFailed"]);
    expect((await ok("GET", "/v1/queues/q/messages")).messages).toEqual([]);
  });
});

describe("purge and attributes", () => {
  it("purges every message once a minute, ending the live jobs among them", async () => {
    const { job } = await ok("POST", "/v1/queues/p/jobs", { input: 1 }, 201);
    await ok("POST", "/v1/queues/p/messages", { body: "plain" }, 201);
    expect(await ok("POST", "/v1/queues/p/purge")).toEqual({ deleted: 2 });
    expect((await ok("GET", `/v1/jobs/${job.id}`)).job).toMatchObject({ status: "canceled", error: { type: "QueuePurged" } });
    expect(await errorCode("POST", "/v1/queues/p/purge")).toEqual([409, "PurgeQueueInProgress"]);
    s.clock.advance(60_001);
    expect(await ok("POST", "/v1/queues/p/purge", {})).toEqual({ deleted: 0 });
    expect(await errorCode("POST", "/v1/queues/nope/purge")).toEqual([404, "QueueNotFound"]);
  });

  it("changes the attributes SQS lets change, and refuses bad ones, changing nothing", async () => {
    await s.server.queues.createQueue("", { name: "src" });
    await s.server.queues.createQueue("", { name: "dlq" });
    await s.server.queues.createQueue("", { name: "f.fifo", config: { fifoQueue: true } });
    const put = await ok("PUT", "/v1/queues/src/attributes", { visibilityTimeoutSeconds: 90, delaySeconds: 5, redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 4 }, defaultPriority: 3 });
    expect(put.queue).toMatchObject({ deadLetterQueue: "dlq", attributes: { visibilityTimeoutSeconds: 90, delaySeconds: 5, redrivePolicy: { deadLetterQueue: "dlq", maxReceiveCount: 4 }, defaultPriority: 3 } });
    expect((await s.server.queues.getQueue("", "src")).config).toMatchObject({ visibilityTimeoutSeconds: 90, redrivePolicy: { deadLetterQueueName: "dlq", maxReceiveCount: 4 } });
    const before = await ok("GET", "/v1/queues/src");
    expect(await errorCode("PUT", "/v1/queues/src/attributes", { visibilityTimeoutSeconds: 43_201 })).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("PUT", "/v1/queues/src/attributes", { redrivePolicy: { deadLetterQueue: "missing", maxReceiveCount: 1 } })).toEqual([400, "InvalidParameterValue"]);
    expect(await errorCode("PUT", "/v1/queues/src/attributes", { redrivePolicy: { deadLetterQueue: "f.fifo", maxReceiveCount: 1 } })).toEqual([400, "InvalidParameterValue"]);
    expect(await errorCode("PUT", "/v1/queues/src/attributes", { contentBasedDeduplication: true })).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("PUT", "/v1/queues/src/attributes", { fifo: true })).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("PUT", "/v1/queues/nope/attributes", {})).toEqual([404, "QueueNotFound"]);
    expect(await ok("GET", "/v1/queues/src")).toEqual(before);
    const cleared = await ok("PUT", "/v1/queues/src/attributes", { redrivePolicy: null });
    expect(cleared.queue).toMatchObject({ deadLetterQueue: null, attributes: { redrivePolicy: null, visibilityTimeoutSeconds: 90 } });
    expect((await ok("PUT", "/v1/queues/f.fifo/attributes", { contentBasedDeduplication: true })).queue.attributes.contentBasedDeduplication).toBe(true);
  });
});

describe("redrive and retry", () => {
  it("redrives a dead-letter queue back to its source: the failed jobs run again", async () => {
    const ids = [await failedJob("embed", { n: 1 }), await failedJob("embed", { n: 2 })];
    expect((await ok("GET", "/v1/queues/embed")).queue.stats.deadLetterMessages).toBe(2);
    const { task } = await ok("POST", "/v1/queues/embed-dlq/redrive", {}, 201);
    expect(task).toMatchObject({ source: "embed-dlq", destination: null, status: "RUNNING", toMoveCount: 2, maxPerSecond: null });
    await s.server.queues.moveTasks.runner.idle();
    const { tasks } = await ok("GET", "/v1/queues/embed-dlq/redrive");
    expect(tasks.map((t: Json) => [t.taskHandle, t.status, t.movedCount])).toEqual([[task.taskHandle, "COMPLETED", 2]]);
    const leased = (await ok("POST", "/v1/queues/embed/leases", { max: 10 })).jobs;
    expect(leased.map((j: Json) => [j.id, j.attempt]).sort()).toEqual(ids.map((id) => [id, 1]).sort());
  });

  it("runs one redrive per queue at a time, cancels a running one, and refuses what it can't do", async () => {
    for (let n = 0; n < 3; n++) await failedJob("slow", { n });
    const { task } = await ok("POST", "/v1/queues/slow-dlq/redrive", { maxPerSecond: 1 }, 201);
    await s.server.queues.moveTasks.runner.idle();
    expect((await ok("GET", "/v1/queues/slow-dlq/redrive")).tasks[0]).toMatchObject({ status: "RUNNING", movedCount: 1, maxPerSecond: 1 });
    expect(await errorCode("POST", "/v1/queues/slow-dlq/redrive", {})).toEqual([409, "RedriveInProgress"]);
    const cancelled = await ok("POST", `/v1/redrives/${task.taskHandle}/cancel`);
    expect(["CANCELLING", "CANCELLED"]).toContain(cancelled.task.status);
    await s.server.queues.moveTasks.runner.idle();
    expect((await ok("GET", "/v1/queues/slow-dlq/redrive")).tasks[0]).toMatchObject({ status: "CANCELLED", movedCount: 1 });
    expect(await errorCode("POST", `/v1/redrives/${task.taskHandle}/cancel`)).toEqual([409, "RedriveAlreadyFinished"]);
    expect(await errorCode("POST", "/v1/redrives/no-such-task/cancel")).toEqual([404, "ResourceNotFound"]);
    expect(await errorCode("POST", "/v1/queues/slow/redrive", {})).toEqual([400, "InvalidParameterValue"]);
    expect(await errorCode("POST", "/v1/queues/slow-dlq/redrive", { destination: "missing" })).toEqual([404, "QueueNotFound"]);
    expect(await errorCode("POST", "/v1/queues/nope/redrive", {})).toEqual([404, "QueueNotFound"]);
    expect(await errorCode("POST", "/v1/queues/slow-dlq/redrive", { maxPerSecond: 501 })).toEqual([400, "ValidationFailed"]);
    expect(await errorCode("GET", "/v1/queues/nope/redrive")).toEqual([404, "QueueNotFound"]);
  });

  it("retries a failed or canceled job: queued again, attempts starting over; other states are 409", async () => {
    const failed = await failedJob("r");
    const retried = await ok("POST", `/v1/jobs/${failed}/retry`);
    expect(retried.job).toMatchObject({ id: failed, status: "queued", attempt: 0, finishedAt: null, error: { message: "boom" } });
    expect((await ok("GET", "/v1/queues/r")).queue.stats).toMatchObject({ deadLetterMessages: 0, messages: { visible: 1 } });
    const [again] = (await ok("POST", "/v1/queues/r/leases", { max: 5 })).jobs;
    expect([again.id, again.attempt]).toEqual([failed, 1]);
    expect(await errorCode("POST", `/v1/jobs/${failed}/retry`)).toEqual([409, "JobNotRetryable"]);

    const { job } = await ok("POST", "/v1/queues/r/jobs", { input: 2 }, 201);
    expect(await errorCode("POST", `/v1/jobs/${job.id}/retry`)).toEqual([409, "JobNotRetryable"]);
    await ok("POST", `/v1/jobs/${job.id}/cancel`);
    expect((await ok("POST", `/v1/jobs/${job.id}/retry`, {})).job).toMatchObject({ status: "queued", cancelRequested: false });
    expect(await errorCode("POST", "/v1/jobs/nope/retry")).toEqual([404, "JobNotFound"]);
  });
});

describe("stats over Server-Sent Events", () => {
  it("streams the queue list at once, then every interval", async () => {
    await s.server.queues.createQueue("", { name: "a" });
    const stream = await openEventStream(`${s.url}/v1/events/queues?intervalSeconds=5`);
    try {
      expect(stream.contentType).toContain("text/event-stream");
      const first = await stream.next();
      expect(first).toMatchObject({ event: "queues", data: { nextCursor: null } });
      expect(first!.data.queues.map((q: Json) => [q.name, q.stats.messages.visible])).toEqual([["a", 0]]);
      await ok("POST", "/v1/queues/a/messages", { body: "x" }, 201);
      s.clock.advance(5_000);
      const second = await stream.next();
      expect(second!.data.queues[0].stats.messages.visible).toBe(1);
      expect(second!.data.at).toBe(new Date(s.clock.nowMs()).toISOString());
    } finally {
      stream.close();
    }
  });

  it("streams one queue with its redrives, and says when it is gone", async () => {
    await failedJob("w");
    const stream = await openEventStream(`${s.url}/v1/queues/w-dlq/events?intervalSeconds=1`);
    try {
      const first = await stream.next();
      expect(first).toMatchObject({ event: "queue", data: { queue: { name: "w-dlq", stats: { messages: { visible: 1 } } }, redrives: [], deadLetterSources: ["w"] } });
      const { task } = await ok("POST", "/v1/queues/w-dlq/redrive", {}, 201);
      await s.server.queues.moveTasks.runner.idle();
      s.clock.advance(1_000);
      const second = await stream.next();
      expect(second!.data.redrives).toMatchObject([{ taskHandle: task.taskHandle, status: "COMPLETED", movedCount: 1, toMoveCount: 1 }]);
      await s.server.queues.deleteQueue("", "w-dlq");
      s.clock.advance(1_000);
      expect(await stream.next()).toMatchObject({ event: "gone", data: { queue: "w-dlq" } });
      expect(await stream.next()).toBeUndefined();
    } finally {
      stream.close();
    }
    expect(await errorCode("GET", "/v1/queues/nope/events")).toEqual([404, "QueueNotFound"]);
    expect(await errorCode("GET", "/v1/events/queues?intervalSeconds=0")).toEqual([400, "ValidationFailed"]);
  });
});
