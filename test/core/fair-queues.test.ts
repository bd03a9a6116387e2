import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QueueRecord } from "../../src/core/queue.js";
import type { SendInput } from "../../src/core/queue-service.js";
import { type ServiceHarness, openServiceHarness } from "./service-harness.js";

let h: ServiceHarness;
beforeEach(() => {
  h = openServiceHarness();
});
afterEach(async () => {
  await h.close();
});

/** Sends in batches of 10, all in one event-loop turn (one group commit). */
async function sendAll(queue: QueueRecord, entries: SendInput[]): Promise<void> {
  const batches: SendInput[][] = [];
  for (let i = 0; i < entries.length; i += 10) batches.push(entries.slice(i, i + 10));
  await Promise.all(batches.map((b) => h.service.sendMessages(queue, b)));
}

/** Receives `receives` times (deleting what it gets) and returns the receive number (1-based) of each body. */
async function receiveIndex(queue: QueueRecord, receives: number, maxMessages: number): Promise<Map<string, number>> {
  const at = new Map<string, number>();
  for (let r = 1; r <= receives; r++) {
    const got = await h.service.receiveMessages(queue, { maxMessages });
    for (const m of got) at.set(m.body, r);
    if (got.length > 0) await h.service.deleteMessages(queue, got.map((m) => m.receiptHandle));
  }
  return at;
}

describe("fair queues (MessageGroupId on a standard queue)", () => {
  it("10,000 messages of group A then 10 of B: every B message within the first 100 receives of 1 message", async () => {
    const { queue } = await h.service.createQueue("", { name: "tenants" });
    await sendAll(queue, Array.from({ length: 10_000 }, (_, i) => ({ body: `A${i}`, groupId: "A" })));
    await sendAll(queue, Array.from({ length: 10 }, (_, i) => ({ body: `B${i}`, groupId: "B" })));
    const at = await receiveIndex(queue, 100, 1);
    const bAt = Array.from({ length: 10 }, (_, i) => at.get(`B${i}`));
    expect(bAt.every((r) => r !== undefined && r <= 100)).toBe(true);
    // Round-robin between the two groups: B is done after ~20 receives.
    expect(Math.max(...(bAt as number[]))).toBeLessThanOrEqual(21);
  }, 60_000);

  it("the same with receives of 10 messages: B is done within the first 2 receives", async () => {
    const { queue } = await h.service.createQueue("", { name: "tenants" });
    await sendAll(queue, Array.from({ length: 10_000 }, (_, i) => ({ body: `A${i}`, groupId: "A" })));
    await sendAll(queue, Array.from({ length: 10 }, (_, i) => ({ body: `B${i}`, groupId: "B" })));
    const at = await receiveIndex(queue, 3, 10);
    expect(Array.from({ length: 10 }, (_, i) => at.get(`B${i}`)).every((r) => r !== undefined && r <= 2)).toBe(true);
  }, 60_000);

  it("a group that arrives later starts level with the least-served group, not ahead of everyone", async () => {
    const { queue } = await h.service.createQueue("", { name: "tenants" });
    await sendAll(queue, [...Array.from({ length: 50 }, (_, i) => ({ body: `A${i}`, groupId: "A" })), ...Array.from({ length: 50 }, (_, i) => ({ body: `B${i}`, groupId: "B" }))]);
    await receiveIndex(queue, 20, 1); // A and B served 10 each
    await sendAll(queue, Array.from({ length: 50 }, (_, i) => ({ body: `C${i}`, groupId: "C" })));
    const got: string[] = [];
    for (let i = 0; i < 9; i++) got.push(...(await h.service.receiveMessages(queue, { maxMessages: 1, visibilityTimeoutSeconds: 600 })).map((m) => m.body[0]!));
    expect(got.filter((g) => g === "C").length).toBe(3);
  });

  it("ungrouped messages on a queue with groups are one more flow", async () => {
    const { queue } = await h.service.createQueue("", { name: "mixed" });
    await sendAll(queue, Array.from({ length: 100 }, (_, i) => ({ body: `A${i}`, groupId: "A" })));
    await sendAll(queue, Array.from({ length: 5 }, (_, i) => ({ body: `plain${i}` })));
    const at = await receiveIndex(queue, 10, 1);
    expect(Array.from({ length: 5 }, (_, i) => at.get(`plain${i}`)).every((r) => r !== undefined && r <= 10)).toBe(true);
  });
});

describe("priorities (Sluice.Priority)", () => {
  it("higher first, oldest first within a priority, and the queue's default for messages without one", async () => {
    const { queue } = await h.service.createQueue("", { name: "p", config: { defaultPriority: 5 } });
    await h.service.sendMessages(queue, [{ body: "d1" }, { body: "p9", priority: 9 }, { body: "p0", priority: 0 }, { body: "d2" }, { body: "p7", priority: 7 }]);
    expect((await h.service.receiveMessages(queue, { maxMessages: 10 })).map((m) => m.body)).toEqual(["p9", "p7", "d1", "d2", "p0"]);
  });

  it("a redelivered message keeps its priority", async () => {
    const { queue } = await h.service.createQueue("", { name: "p", config: { visibilityTimeoutSeconds: 5 } });
    await h.service.sendMessages(queue, [{ body: "urgent", priority: 9 }, { body: "normal" }]);
    expect((await h.service.receiveMessages(queue, {})).map((m) => m.body)).toEqual(["urgent"]);
    h.clock.advance(5_000);
    expect((await h.service.receiveMessages(queue, {})).map((m) => m.body)).toEqual(["urgent"]);
  });

  it("compose with fairness: fairness picks the group, priority orders within the group", async () => {
    const { queue } = await h.service.createQueue("", { name: "pf" });
    await sendAll(queue, [
      ...Array.from({ length: 5 }, (_, i) => ({ body: `A-p9-${i}`, groupId: "A", priority: 9 })),
      { body: "B-p0", groupId: "B", priority: 0 },
      { body: "B-p5", groupId: "B", priority: 5 },
    ]);
    const got = (await h.service.receiveMessages(queue, { maxMessages: 4 })).map((m) => m.body);
    // One per group per round; B's p5 before its p0; A's priority 9 does not let it crowd B out.
    expect(got).toEqual(["A-p9-0", "B-p5", "A-p9-1", "B-p0"]);
  });
});
