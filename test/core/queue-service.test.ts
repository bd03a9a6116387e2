import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ServiceHarness, errorCode, openServiceHarness, settle, settlesAfter } from "./service-harness.js";

let h: ServiceHarness;
beforeEach(() => {
  h = openServiceHarness();
});
afterEach(async () => {
  await h.close();
});

describe("queues", () => {
  it("creates idempotently with the same attributes and refuses different ones", async () => {
    const a = await h.service.createQueue("", { name: "jobs", config: { visibilityTimeoutSeconds: 60 } });
    const b = await h.service.createQueue("", { name: "jobs", config: { visibilityTimeoutSeconds: 60 } });
    expect(b.queue.id).toBe(a.queue.id);
    expect(b.created).toBe(false);
    expect(await errorCode(h.service.createQueue("", { name: "jobs", config: { visibilityTimeoutSeconds: 61 } }))).toBe("QueueAlreadyExists");
  });

  it("validates names and attribute ranges", async () => {
    expect(await errorCode(h.service.createQueue("", { name: "bad name" }))).toBe("InvalidParameterValue");
    expect(await errorCode(h.service.createQueue("", { name: "x".repeat(81) }))).toBe("InvalidParameterValue");
    expect(await errorCode(h.service.createQueue("", { name: "q", config: { visibilityTimeoutSeconds: 43_201 } }))).toBe("InvalidAttributeValue");
    expect(await errorCode(h.service.createQueue("", { name: "q", config: { messageRetentionPeriodSeconds: 59 } }))).toBe("InvalidAttributeValue");
    expect(await errorCode(h.service.getQueue("", "q"))).toBe("QueueNotFound");
  });

  it("refuses to recreate a queue within 60 s of deleting it", async () => {
    await h.service.createQueue("", { name: "q" });
    await h.service.deleteQueue("", "q");
    expect(await errorCode(h.service.createQueue("", { name: "q" }))).toBe("QueueDeletedRecently");
    h.clock.advance(60_000);
    expect((await h.service.createQueue("", { name: "q" })).created).toBe(true);
  });

  it("allows one purge per 60 s", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    await h.service.sendMessage(queue, { body: "x" });
    await h.service.purgeQueue("", "q");
    expect(await errorCode(h.service.purgeQueue("", "q"))).toBe("PurgeQueueInProgress");
    h.clock.advance(60_000);
    await h.service.purgeQueue("", "q");
    expect(await h.service.receiveMessages(queue, { maxMessages: 10 })).toEqual([]);
  });

  // The 60-second rule holds for purges that arrive together too: the check and the purge are one
  // write, or both would pass the check and the second would delete what was sent in between.
  it("refuses the second of two concurrent purges", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    await h.service.sendMessage(queue, { body: "x" });
    const results = await Promise.allSettled([h.service.purgeQueue("", "q"), h.service.purgeQueue("", "q")]);
    expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = results.find((r) => r.status === "rejected");
    expect(await errorCode(Promise.reject(refused!.reason))).toBe("PurgeQueueInProgress");
  });

  it("pages ListQueues", async () => {
    for (const n of ["a", "b", "c"]) await h.service.createQueue("", { name: n });
    const first = await h.service.listQueues("", { maxResults: 2 });
    expect(first.queues.map((q) => q.name)).toEqual(["a", "b"]);
    expect(first.hasMore).toBe(true);
    const rest = await h.service.listQueues("", { maxResults: 2, afterName: "b" });
    expect(rest.queues.map((q) => q.name)).toEqual(["c"]);
    expect(rest.hasMore).toBe(false);
  });
});

describe("messages", () => {
  it("hides a received message for its visibility timeout, then redelivers with a new handle", async () => {
    const { queue } = await h.service.createQueue("", { name: "q", config: { visibilityTimeoutSeconds: 30 } });
    await h.service.sendMessage(queue, { body: "hello" });
    const [first] = await h.service.receiveMessages(queue, {});
    expect(first!.receiveCount).toBe(1);
    expect(await h.service.receiveMessages(queue, {})).toEqual([]);
    h.clock.advance(30_000);
    const [second] = await h.service.receiveMessages(queue, {});
    expect(second!.receiveCount).toBe(2);
    expect(second!.receiptHandle).not.toBe(first!.receiptHandle);
    // The old handle still names the message on a standard queue, as in SQS: it deletes it.
    const [old] = await h.service.deleteMessages(queue, [first!.receiptHandle]);
    expect(old!.ok).toBe(true);
    h.clock.advance(30_000);
    expect(await h.service.receiveMessages(queue, {})).toEqual([]);
  });

  it("delays messages per message and per queue", async () => {
    const { queue } = await h.service.createQueue("", { name: "q", config: { delaySeconds: 5 } });
    await h.service.sendMessage(queue, { body: "queue-delay" });
    await h.service.sendMessage(queue, { body: "no-delay", delaySeconds: 0 });
    expect((await h.service.receiveMessages(queue, { maxMessages: 10 })).map((m) => m.body)).toEqual(["no-delay"]);
    expect((await h.service.queueStats(queue)).delayed).toBe(1);
    h.clock.advance(5_000);
    expect((await h.service.receiveMessages(queue, { maxMessages: 10 })).map((m) => m.body)).toEqual(["queue-delay"]);
  });

  it("rejects bad bodies, oversized messages and bad attributes, and sends the rest of a batch", async () => {
    const { queue } = await h.service.createQueue("", { name: "q", config: { maximumMessageSizeBytes: 1024 } });
    const outcomes = await h.service.sendMessages(queue, [
      { body: "ok" },
      { body: "bad\u0000char" },
      { body: "x".repeat(1025) },
      { body: "ok", attributes: { "AWS.reserved": { dataType: "String", stringValue: "v" } } },
      { body: "ok", attributes: { n: { dataType: "Number", stringValue: "not-a-number" } } },
      { body: "ok", delaySeconds: 901 },
      { body: "ok", priority: 10 },
    ]);
    expect(outcomes.map((o) => (o.ok ? "ok" : o.error.code))).toEqual([
      "ok",
      "InvalidMessageContents",
      "MessageTooLong",
      "InvalidParameterValue",
      "InvalidParameterValue",
      "InvalidParameterValue",
      "InvalidParameterValue",
    ]);
    expect(await h.service.receiveMessages(queue, { maxMessages: 10 })).toHaveLength(1);
  });

  it("changes visibility; a handle whose lease ended succeeds and changes nothing; an older handle changes the new lease", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    await h.service.sendMessage(queue, { body: "x" });
    const [m] = await h.service.receiveMessages(queue, {});
    const [ok] = await h.service.changeVisibility(queue, [{ receiptHandle: m!.receiptHandle, visibilityTimeoutSeconds: 0 }]);
    expect(ok!.ok).toBe(true);
    // The lease is over (visible again), no one received it since: success, and it stays visible.
    const [ended] = await h.service.changeVisibility(queue, [{ receiptHandle: m!.receiptHandle, visibilityTimeoutSeconds: 10 }]);
    expect(ended!.ok ? "ok" : ended!.error.code).toBe("ok");
    const [again] = await h.service.receiveMessages(queue, {});
    const [older] = await h.service.changeVisibility(queue, [{ receiptHandle: m!.receiptHandle, visibilityTimeoutSeconds: 0 }]);
    expect(older!.ok ? "ok" : older!.error.code).toBe("ok");
    expect((await h.service.receiveMessages(queue, {})).map((x) => x.receiveCount)).toEqual([3]);
    const [garbage] = await h.service.changeVisibility(queue, [{ receiptHandle: "not-a-handle", visibilityTimeoutSeconds: 10 }]);
    expect(garbage!.ok ? "ok" : garbage!.error.code).toBe("ReceiptHandleInvalid");
    expect(again!.receiveCount).toBe(2);
  });

  // SQS: a message may stay in flight at most 12 hours from the receive; "if you attempt to set
  // the VisibilityTimeout to a value greater than the maximum time left, Amazon SQS returns an
  // error" (and changes nothing). A new receive starts a new 12 hours.
  it("refuses to extend visibility past 12 hours from the receive, and changes nothing", async () => {
    const hourMs = 3_600_000;
    const { queue } = await h.service.createQueue("", { name: "q" });
    await h.service.sendMessage(queue, { body: "x" });
    const [m] = await h.service.receiveMessages(queue, { visibilityTimeoutSeconds: 43_200 });
    h.clock.advance(hourMs);
    const change = (seconds: number) => h.service.changeVisibility(queue, [{ receiptHandle: m!.receiptHandle, visibilityTimeoutSeconds: seconds }]);
    const [tooLong] = await change(43_200);
    expect(tooLong!.ok ? "ok" : [tooLong!.error.code, tooLong!.error.message]).toEqual([
      "InvalidParameterValue",
      "A message stays in flight at most 43200 seconds from its receive: 43200 more seconds would go beyond.",
    ]);
    const [upToTheLimit] = await change(11 * 3_600);
    expect(upToTheLimit!.ok).toBe(true);
    h.clock.advance(10 * hourMs);
    const [stillTooLong] = await change(3_601);
    expect(stillTooLong!.ok).toBe(false);
    // The refused change left the message's visibility as it was: visible again 12 h after the receive.
    h.clock.advance(hourMs - 1);
    expect(await h.service.receiveMessages(queue, {})).toEqual([]);
    h.clock.advance(1);
    const [again] = await h.service.receiveMessages(queue, { visibilityTimeoutSeconds: 60 });
    expect(again!.body).toBe("x");
    const [fresh] = await h.service.changeVisibility(queue, [{ receiptHandle: again!.receiptHandle, visibilityTimeoutSeconds: 43_200 }]);
    expect(fresh!.ok).toBe(true);
  });

  it("never returns messages past retention and expires them", async () => {
    const { queue } = await h.service.createQueue("", { name: "q", config: { messageRetentionPeriodSeconds: 60 } });
    await h.service.sendMessage(queue, { body: "old" });
    h.clock.advance(61_000);
    expect(await h.service.receiveMessages(queue, {})).toEqual([]);
    expect(await h.service.expireMessages(queue)).toBe(1);
  });

  it("receives higher priorities first", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    await h.service.sendMessages(queue, [{ body: "p0" }, { body: "p9", priority: 9 }, { body: "p3", priority: 3 }]);
    expect((await h.service.receiveMessages(queue, { maxMessages: 10 })).map((m) => m.body)).toEqual(["p9", "p3", "p0"]);
  });
});

describe("long polling", () => {
  it("is woken by a send, not by a timer", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    let result: string[] | undefined;
    const poll = h.service.receiveMessages(queue, { waitTimeSeconds: 20 }).then((ms) => (result = ms.map((m) => m.body)));
    await settle();
    expect(h.service.waiters.waiterCount(queue.id)).toBe(1);
    expect(result).toBeUndefined();
    await h.service.sendMessage(queue, { body: "wake" });
    await poll;
    expect(result).toEqual(["wake"]);
  });

  it("returns empty when the wait passes", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    const poll = h.service.receiveMessages(queue, { waitTimeSeconds: 20 });
    await settle();
    h.clock.advance(19_999);
    await settle();
    expect(h.service.waiters.waiterCount(queue.id)).toBe(1);
    h.clock.advance(1);
    expect(await poll).toEqual([]);
  });

  it("wakes when a delayed message becomes visible", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    await h.service.sendMessage(queue, { body: "later", delaySeconds: 3 });
    const poll = h.service.receiveMessages(queue, { waitTimeSeconds: 20 });
    await settle();
    h.clock.advance(3_000);
    expect((await poll).map((m) => m.body)).toEqual(["later"]);
  });

  it("wakes when a message delayed after the poll began becomes visible, not at the end of the wait", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    const poll = h.service.receiveMessages(queue, { waitTimeSeconds: 20 });
    await settle();
    await h.service.sendMessage(queue, { body: "later", delaySeconds: 2 });
    const got = await settlesAfter(h.clock, 2_000, poll);
    expect(got.map((m) => m.body)).toEqual(["later"]);
  });

  it("wakes when a visibility change makes a message visible during the wait", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    await h.service.sendMessage(queue, { body: "again" });
    const [first] = await h.service.receiveMessages(queue, { visibilityTimeoutSeconds: 600 });
    const poll = h.service.receiveMessages(queue, { waitTimeSeconds: 20 });
    await settle();
    await h.service.changeVisibility(queue, [{ receiptHandle: first!.receiptHandle, visibilityTimeoutSeconds: 5 }]);
    const got = await settlesAfter(h.clock, 5_000, poll);
    expect(got.map((m) => m.body)).toEqual(["again"]);
  });

  it("returns empty at once on shutdown or abort", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    const controller = new AbortController();
    const aborted = h.service.receiveMessages(queue, { waitTimeSeconds: 20, signal: controller.signal });
    const closed = h.service.receiveMessages(queue, { waitTimeSeconds: 20 });
    await settle();
    controller.abort();
    expect(await aborted).toEqual([]);
    h.service.waiters.closeAll();
    expect(await closed).toEqual([]);
  });

  it("asks for a lazy abort signal only when the receive is about to wait", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    const controller = new AbortController();
    let asked = 0;
    const signal = (): AbortSignal => {
      asked++;
      return controller.signal;
    };
    await h.service.sendMessages(queue, [{ body: "ready" }]);
    expect((await h.service.receiveMessages(queue, { waitTimeSeconds: 20, signal })).map((m) => m.body)).toEqual(["ready"]);
    expect(asked).toBe(0);
    const waiting = h.service.receiveMessages(queue, { waitTimeSeconds: 20, signal });
    await settle();
    expect(asked).toBe(1);
    controller.abort();
    expect(await waiting).toEqual([]);
    expect(asked).toBe(1);
  });

  it("hands one send of ten to one poller, and passes the wake-up on when more remain", async () => {
    const { queue } = await h.service.createQueue("", { name: "q" });
    const polls = [0, 1, 2].map(() => h.service.receiveMessages(queue, { waitTimeSeconds: 20, maxMessages: 10 }));
    await settle();
    await h.service.sendMessages(queue, Array.from({ length: 20 }, (_, i) => ({ body: `m${i}` })));
    const [a, b] = await Promise.all([polls[0]!, polls[1]!]);
    expect(a!.length + b!.length).toBe(20);
    h.clock.advance(20_000);
    expect(await polls[2]!).toEqual([]);
  });
});
