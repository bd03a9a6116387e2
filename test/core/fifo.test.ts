import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueRecord } from "../../src/core/queue.js";
import { type ServiceHarness, errorCode, openServiceHarness, settle } from "./service-harness.js";

let h: ServiceHarness;
beforeEach(() => {
  h = openServiceHarness();
});
afterEach(async () => {
  await h.close();
});

async function fifoQueue(config: Record<string, unknown> = {}): Promise<QueueRecord> {
  return (await h.service.createQueue("", { name: "q.fifo", config: { fifoQueue: true, ...config } })).queue;
}

describe("FIFO sends", () => {
  it("requires a group id, and a deduplication id unless content-based deduplication is on", async () => {
    const q = await fifoQueue();
    expect(await errorCode(h.service.sendMessage(q, { body: "x", deduplicationId: "d" }))).toBe("MissingParameter");
    expect(await errorCode(h.service.sendMessage(q, { body: "x", groupId: "g" }))).toBe("InvalidParameterValue");
    expect(await errorCode(h.service.sendMessage(q, { body: "x", groupId: "bad group", deduplicationId: "d" }))).toBe("InvalidParameterValue");
    expect(await errorCode(h.service.sendMessage(q, { body: "x", groupId: "g", deduplicationId: "x".repeat(129) }))).toBe("InvalidParameterValue");
    const sent = await h.service.sendMessage(q, { body: "x", groupId: "g", deduplicationId: "d" });
    expect(sent.sequenceNumber).toMatch(/^\d{20}$/);
  });

  it("rejects per-message delays but applies the queue's delay", async () => {
    const q = await fifoQueue({ delaySeconds: 5 });
    expect(await errorCode(h.service.sendMessage(q, { body: "x", groupId: "g", deduplicationId: "d", delaySeconds: 3 }))).toBe("InvalidParameterValue");
    await h.service.sendMessage(q, { body: "x", groupId: "g", deduplicationId: "d", delaySeconds: 0 });
    expect(await h.service.receiveMessages(q, {})).toEqual([]);
    h.clock.advance(5_000);
    expect((await h.service.receiveMessages(q, {})).map((m) => m.body)).toEqual(["x"]);
  });

  it("rejects a deduplication id on a standard queue", async () => {
    const { queue } = await h.service.createQueue("", { name: "std" });
    expect(await errorCode(h.service.sendMessage(queue, { body: "x", deduplicationId: "d" }))).toBe("InvalidParameterValue");
  });

  it("answers a duplicate with the original id and sequence number and the new request's MD5s, without enqueuing it", async () => {
    const q = await fifoQueue();
    const first = await h.service.sendMessage(q, { body: "one", groupId: "g", deduplicationId: "d" });
    const dup = await h.service.sendMessage(q, { body: "two", groupId: "g", deduplicationId: "d" });
    expect(dup.messageId).toBe(first.messageId);
    expect(dup.sequenceNumber).toBe(first.sequenceNumber);
    expect(dup.bodyMd5).toBe(createHash("md5").update("two").digest("hex"));
    const got = await h.service.receiveMessages(q, { maxMessages: 10 });
    expect(got.map((m) => m.body)).toEqual(["one"]);
    // Deleted, the id is still remembered for the rest of the 5 minutes.
    await h.service.deleteMessages(q, [got[0]!.receiptHandle]);
    h.clock.advance(299_999);
    expect((await h.service.sendMessage(q, { body: "three", groupId: "g", deduplicationId: "d" })).messageId).toBe(first.messageId);
    h.clock.advance(1);
    expect((await h.service.sendMessage(q, { body: "four", groupId: "g", deduplicationId: "d" })).messageId).not.toBe(first.messageId);
  });

  it("answers a repeat within one batch as its first's duplicate, in its scope, and enqueues the first once", async () => {
    const q = await fifoQueue({ deduplicationScope: "messageGroup", fifoThroughputLimit: "perMessageGroupId" });
    const earlier = await h.service.sendMessage(q, { body: "earlier", groupId: "a", deduplicationId: "old" });
    const outcomes = await h.service.sendMessages(q, [
      { body: "a1", groupId: "a", deduplicationId: "d" },
      { body: "b1", groupId: "b", deduplicationId: "d" },
      { body: "a2", groupId: "a", deduplicationId: "d" },
      { body: "old again", groupId: "a", deduplicationId: "old" },
      { body: "old repeated", groupId: "a", deduplicationId: "old" },
    ]);
    const sent = outcomes.map((o) => (o.ok ? o.value : undefined));
    expect(sent[2]!.messageId).toBe(sent[0]!.messageId);
    expect(sent[2]!.sequenceNumber).toBe(sent[0]!.sequenceNumber);
    expect(sent[1]!.messageId).not.toBe(sent[0]!.messageId);
    expect([sent[3]!.messageId, sent[4]!.messageId]).toEqual([earlier.messageId, earlier.messageId]);
    expect(sent[2]!.bodyMd5).toBe(createHash("md5").update("a2").digest("hex"));
    const got = await h.service.receiveMessages(q, { maxMessages: 10 });
    expect(got.map((m) => m.body).sort()).toEqual(["a1", "b1", "earlier"]);
  });

  it("deduplicates by the body's SHA-256 with ContentBasedDeduplication and returns it as the deduplication id", async () => {
    const q = await fifoQueue({ contentBasedDeduplication: true });
    const a = await h.service.sendMessage(q, { body: "same", groupId: "g" });
    const b = await h.service.sendMessage(q, { body: "same", groupId: "other" });
    const c = await h.service.sendMessage(q, { body: "same", groupId: "g", deduplicationId: "explicit" });
    expect(b.messageId).toBe(a.messageId);
    expect(c.messageId).not.toBe(a.messageId);
    const got = await h.service.receiveMessages(q, { maxMessages: 10 });
    expect(got[0]!.deduplicationId).toBe(createHash("sha256").update("same").digest("hex"));
  });

  it("scopes deduplication to the message group with DeduplicationScope=messageGroup", async () => {
    const q = await fifoQueue({ deduplicationScope: "messageGroup", fifoThroughputLimit: "perMessageGroupId" });
    const a = await h.service.sendMessage(q, { body: "x", groupId: "a", deduplicationId: "d" });
    const b = await h.service.sendMessage(q, { body: "x", groupId: "b", deduplicationId: "d" });
    expect(b.messageId).not.toBe(a.messageId);
    expect((await h.service.sendMessage(q, { body: "x", groupId: "a", deduplicationId: "d" })).messageId).toBe(a.messageId);
  });

  it("gives strictly increasing sequence numbers", async () => {
    const q = await fifoQueue({ contentBasedDeduplication: true });
    const outcomes = await h.service.sendMessages(q, Array.from({ length: 10 }, (_, i) => ({ body: `m${i}`, groupId: `g${i % 3}` })));
    const numbers = outcomes.map((o) => (o.ok ? o.value.sequenceNumber! : ""));
    expect([...numbers].sort()).toEqual(numbers);
    expect(new Set(numbers).size).toBe(10);
  });
});

describe("FIFO receives", () => {
  it("delivers a group in order, holds it while a message is in flight, and lets other groups proceed", async () => {
    const q = await fifoQueue({ contentBasedDeduplication: true, visibilityTimeoutSeconds: 30 });
    await h.service.sendMessages(q, ["a1", "a2", "a3", "b1"].map((body) => ({ body, groupId: body[0] })));
    const first = await h.service.receiveMessages(q, { maxMessages: 2 });
    expect(first.map((m) => m.body)).toEqual(["a1", "a2"]);
    const [b1] = await h.service.receiveMessages(q, { maxMessages: 10 });
    expect(b1!.body).toBe("b1");
    await h.service.deleteMessages(q, [first[0]!.receiptHandle, b1!.receiptHandle]);
    expect(await h.service.receiveMessages(q, { maxMessages: 10 })).toEqual([]);
    // The visibility of a2 runs out: it comes back before a3.
    h.clock.advance(30_000);
    expect((await h.service.receiveMessages(q, { maxMessages: 10 })).map((m) => m.body)).toEqual(["a2", "a3"]);
  });

  it("wakes a long poll when a delete unblocks a group", async () => {
    const q = await fifoQueue({ contentBasedDeduplication: true });
    await h.service.sendMessages(q, [{ body: "a1", groupId: "a" }, { body: "a2", groupId: "a" }]);
    const [a1] = await h.service.receiveMessages(q, {});
    let result: string[] | undefined;
    const poll = h.service.receiveMessages(q, { waitTimeSeconds: 20 }).then((ms) => (result = ms.map((m) => m.body)));
    await settle();
    expect(result).toBeUndefined();
    await h.service.deleteMessages(q, [a1!.receiptHandle]);
    await poll;
    expect(result).toEqual(["a2"]);
  });

  it("sends no wake-up for a delete that unblocks nothing (idle consumers would re-poll for nothing)", async () => {
    const q = await fifoQueue({ contentBasedDeduplication: true });
    await h.service.sendMessages(q, [{ body: "a1", groupId: "a" }, { body: "b1", groupId: "b" }, { body: "b2", groupId: "b" }]);
    const taken = await h.service.receiveMessages(q, { maxMessages: 10 });
    expect(taken.map((m) => m.body).sort()).toEqual(["a1", "b1", "b2"]);
    const receipt = (body: string) => taken.find((m) => m.body === body)!.receiptHandle;
    let result: string[] | undefined;
    const poll = h.service.receiveMessages(q, { waitTimeSeconds: 20 }).then((ms) => (result = ms.map((m) => m.body)));
    await settle();
    const version = h.service.waiters.version(q.id);
    // a is now empty; b still has b2 in flight: neither delete makes anything receivable.
    await h.service.deleteMessages(q, [receipt("a1"), receipt("b1")]);
    await settle();
    expect(h.service.waiters.version(q.id)).toBe(version);
    expect(h.service.waiters.waiterCount(q.id)).toBe(1);
    // A send does wake it.
    await h.service.sendMessages(q, [{ body: "c1", groupId: "c" }]);
    await poll;
    expect(result).toEqual(["c1"]);
  });

  it("replays a receive with the same ReceiveRequestAttemptId, with the same receipt handles", async () => {
    const q = await fifoQueue({ contentBasedDeduplication: true });
    await h.service.sendMessages(q, [{ body: "a1", groupId: "a" }, { body: "b1", groupId: "b" }]);
    const first = await h.service.receiveMessages(q, { maxMessages: 1, receiveRequestAttemptId: "attempt-1" });
    h.clock.advance(1_000);
    const retry = await h.service.receiveMessages(q, { maxMessages: 1, receiveRequestAttemptId: "attempt-1" });
    expect(retry.map((m) => [m.messageId, m.receiptHandle])).toEqual(first.map((m) => [m.messageId, m.receiptHandle]));
    const next = await h.service.receiveMessages(q, { maxMessages: 1, receiveRequestAttemptId: "attempt-2" });
    expect(next[0]!.body).not.toBe(first[0]!.body);
    expect(await errorCode(h.service.receiveMessages(q, { receiveRequestAttemptId: "bad id" }))).toBe("InvalidParameterValue");
  });

  it("keeps order and delivers exactly once with many concurrent producers and consumers", async () => {
    const q = await fifoQueue({ contentBasedDeduplication: false });
    const groups = 8;
    const perGroup = 40;
    // Each producer owns a group and sends in order; some sends are retried (duplicates).
    const producers = Array.from({ length: groups }, async (_, g) => {
      for (let i = 0; i < perGroup; i++) {
        await h.service.sendMessage(q, { body: `${g}:${i}`, groupId: `g${g}`, deduplicationId: `${g}-${i}` });
        if (i % 7 === 0) await h.service.sendMessage(q, { body: `${g}:${i}`, groupId: `g${g}`, deduplicationId: `${g}-${i}` });
      }
    });
    const seen = new Map<string, number[]>();
    let received = 0;
    const consumers = Array.from({ length: 6 }, async () => {
      while (received < groups * perGroup) {
        const got = await h.service.receiveMessages(q, { maxMessages: 1 + (received % 10), waitTimeSeconds: 0 });
        for (const m of got) {
          const [g, i] = m.body.split(":");
          seen.set(g!, [...(seen.get(g!) ?? []), Number(i)]);
          received++;
        }
        if (got.length > 0) await h.service.deleteMessages(q, got.map((m) => m.receiptHandle));
        else await settle(1);
      }
    });
    await Promise.all([...producers, ...consumers]);
    expect(received).toBe(groups * perGroup);
    for (let g = 0; g < groups; g++) expect(seen.get(String(g))).toEqual(Array.from({ length: perGroup }, (_, i) => i));
  });
});
