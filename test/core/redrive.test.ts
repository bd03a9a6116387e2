import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SluiceError } from "../../src/core/errors.js";
import type { QueueConfig } from "../../src/core/queue.js";
import { listDeadLetterSourceQueues } from "../../src/core/redrive.js";
import { type ServiceHarness, openServiceHarness, settle } from "./service-harness.js";

let h: ServiceHarness;
beforeEach(() => {
  h = openServiceHarness();
});
afterEach(async () => {
  await h.close();
});

async function errorOf(p: Promise<unknown>): Promise<SluiceError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SluiceError) return err;
    throw err;
  }
  throw new Error("expected an error");
}

const redrive = (dlq: string, maxReceiveCount = 2): Partial<QueueConfig> => ({ redrivePolicy: { deadLetterQueueName: dlq, maxReceiveCount } });

describe("RedrivePolicy", () => {
  it("needs an existing dead-letter queue of the same type", async () => {
    const missing = await errorOf(h.service.createQueue("", { name: "src", config: redrive("missing", 3) }));
    expect([missing.code, missing.message]).toEqual(["InvalidParameterValue", "The dead-letter queue missing does not exist."]);
    // What the error is about, for a protocol that words it its own way (SQS: ARNs, RedrivePolicy).
    expect(missing.subject).toEqual({ kind: "deadLetterQueue", problem: "missing", deadLetterQueueName: "missing", maxReceiveCount: 3, fifoSource: false });
    await h.service.createQueue("", { name: "dlq.fifo", config: { fifoQueue: true } });
    await h.service.createQueue("", { name: "dlq" });
    expect((await errorOf(h.service.createQueue("", { name: "src", config: redrive("dlq.fifo") }))).code).toBe("InvalidParameterValue");
    expect((await errorOf(h.service.createQueue("", { name: "src.fifo", config: { fifoQueue: true, ...redrive("dlq") } }))).code).toBe("InvalidParameterValue");
    await h.service.createQueue("", { name: "src.fifo", config: { fifoQueue: true, ...redrive("dlq.fifo") } });
    await h.service.createQueue("", { name: "src" });
    await h.service.updateQueueConfig("", "src", redrive("dlq"));
  });

  it("is refused when the dead-letter queue's RedriveAllowPolicy does not admit the source", async () => {
    await h.service.createQueue("", { name: "closed", config: { redriveAllowPolicy: { redrivePermission: "denyAll" } } });
    await h.service.createQueue("", { name: "picky", config: { redriveAllowPolicy: { redrivePermission: "byQueue", sourceQueueNames: ["friend"] } } });
    expect((await errorOf(h.service.createQueue("", { name: "src", config: redrive("closed") }))).code).toBe("InvalidParameterValue");
    expect((await errorOf(h.service.createQueue("", { name: "stranger", config: redrive("picky") }))).code).toBe("InvalidParameterValue");
    await h.service.createQueue("", { name: "friend", config: redrive("picky") });
  });
});

describe("dead-lettering", () => {
  it("moves a message to the DLQ on the receive after maxReceiveCount, keeping id, body, attributes and sent time", async () => {
    const { queue: dlq } = await h.service.createQueue("", { name: "dlq" });
    const { queue: src } = await h.service.createQueue("", { name: "src", config: { visibilityTimeoutSeconds: 10, ...redrive("dlq", 2) } });
    const sent = await h.service.sendMessage(src, { body: "poison", attributes: { a: { dataType: "String", stringValue: "v" } } });
    const sentAtMs = h.clock.nowMs();
    for (let i = 0; i < 2; i++) {
      expect((await h.service.receiveMessages(src, {})).map((m) => m.body)).toEqual(["poison"]);
      h.clock.advance(10_000);
    }
    // A long poll on the DLQ is woken by the move.
    const dlqPoll = h.service.receiveMessages(dlq, { waitTimeSeconds: 20 });
    await settle();
    expect(await h.service.receiveMessages(src, { maxMessages: 10 })).toEqual([]);
    const [moved] = await dlqPoll;
    expect(moved).toMatchObject({ messageId: sent.messageId, body: "poison", sentAtMs, receiveCount: 1, deadLetterSourceQueueName: "src" });
    expect(moved!.attributes).toEqual({ a: { dataType: "String", stringValue: "v" } });
    expect((await h.service.queueStats(src)).visible).toBe(0);
  });

  // SQS: "For FIFO queues, the enqueue timestamp resets when the message is moved to a dead-letter
  // queue", and the DLQ takes it in the order it arrives there, with its MessageId as its
  // deduplication id (so two moved messages that shared a deduplication id are both kept).
  it("re-enqueues a message moved to a FIFO DLQ: retention restarts, it joins the back of its group", async () => {
    const dayMs = 86_400_000;
    const { queue: dlq } = await h.service.createQueue("", { name: "dlq.fifo", config: { fifoQueue: true } });
    const { queue: src } = await h.service.createQueue("", { name: "src.fifo", config: { fifoQueue: true, visibilityTimeoutSeconds: 10, ...redrive("dlq.fifo", 1) } });
    const sent = await h.service.sendMessage(src, { body: "poison", groupId: "g", deduplicationId: "d1" });
    expect((await h.service.receiveMessages(src, {})).map((m) => m.body)).toEqual(["poison"]);
    h.clock.advance(3 * dayMs);
    await h.service.sendMessage(dlq, { body: "already-there", groupId: "g", deduplicationId: "d0" });
    const movedAtMs = h.clock.nowMs();
    expect(await h.service.receiveMessages(src, {})).toEqual([]);
    h.clock.advance(2 * dayMs); // 5 days after the send, 2 after the move: within the DLQ's 4 days
    const got = await h.service.receiveMessages(dlq, { maxMessages: 10 });
    expect(got.map((m) => m.body)).toEqual(["already-there", "poison"]);
    expect(got[1]).toMatchObject({ messageId: sent.messageId, sentAtMs: movedAtMs, deduplicationId: sent.messageId, groupId: "g" });
    expect(got[1]!.seq).toBeGreaterThan(got[0]!.seq);
  });

  it("keeps delivering when the dead-letter queue was deleted", async () => {
    await h.service.createQueue("", { name: "dlq" });
    const { queue: src } = await h.service.createQueue("", { name: "src", config: { visibilityTimeoutSeconds: 0, ...redrive("dlq", 1) } });
    await h.service.deleteQueue("", "dlq");
    await h.service.sendMessage(src, { body: "m" });
    await h.service.receiveMessages(src, {});
    expect((await h.service.receiveMessages(src, {})).map((m) => m.receiveCount)).toEqual([2]);
  });

  it("lists a DLQ's source queues with pagination", async () => {
    await h.service.createQueue("", { name: "dlq" });
    await h.service.createQueue("", { name: "other-dlq" });
    for (const name of ["s1", "s2", "s3"]) await h.service.createQueue("", { name, config: redrive("dlq") });
    await h.service.createQueue("", { name: "s4", config: redrive("other-dlq") });
    const all = await listDeadLetterSourceQueues(h.service.forAccount(""), "dlq");
    expect(all.queues.map((q) => q.name)).toEqual(["s1", "s2", "s3"]);
    const page1 = await listDeadLetterSourceQueues(h.service.forAccount(""), "dlq", { maxResults: 2 });
    expect([page1.queues.map((q) => q.name), page1.hasMore]).toEqual([["s1", "s2"], true]);
    const page2 = await listDeadLetterSourceQueues(h.service.forAccount(""), "dlq", { maxResults: 2, afterName: "s2" });
    expect([page2.queues.map((q) => q.name), page2.hasMore]).toEqual([["s3"], false]);
    expect((await errorOf(listDeadLetterSourceQueues(h.service.forAccount(""), "nope"))).code).toBe("QueueNotFound");
    expect((await errorOf(listDeadLetterSourceQueues(h.service.forAccount(""), "dlq", { maxResults: 0 }))).code).toBe("InvalidParameterValue");
  });
});
