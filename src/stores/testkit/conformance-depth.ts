/**
 * Conformance cases for queueDepth, the cheap depth read metrics use: it must agree with
 * queueStats on every path that adds, hides, moves or removes messages.
 */
import { expect } from "vitest";
import { defaultQueueConfig } from "../../core/queue.js";
import { type ConformanceContext, T0, newMessage, act } from "./conformance-context.js";
import { jobCaseKit, newJobFor } from "./conformance-jobs-kit.js";
import { messageDelete, messageReceive, messageSend } from "./one-call.js";

export function registerDepthCases({ store, another, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);
  async function makeQueue(name: string): Promise<number> {
    const { queue } = await store().queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    return queue.id;
  }

  /** queueDepth and queueStats of each queue, which must be equal, and what they say. */
  async function depthOf(queueId: number, nowMs: number): Promise<{ visible: number; inFlight: number; delayed: number }> {
    const stats = await store().queueStats({ queueId, nowMs, minSentAtMs: 0 });
    const depth = await store().queueDepth({ queueId, nowMs, minSentAtMs: 0 });
    expect(depth).toEqual(stats);
    return { visible: depth.visible, inFlight: depth.inFlight, delayed: depth.delayed };
  }

  test("queueDepth agrees with queueStats through sends, receives, deletes, dead-letters, moves, purges and queue deletes", async () => {
    const src = await makeQueue("depth-src");
    const dlq = await makeQueue("depth-dlq");
    const dest = await makeQueue("depth-dest");
    expect(await depthOf(src, T0)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });

    await messageSend(store(), { queueId: src, messages: [newMessage(), newMessage({ sentAtMs: T0 + 1, visibleAtMs: T0 + 1 }), newMessage({ visibleAtMs: T0 + 60_000 })] });
    await messageSend(store(), { queueId: src, messages: [newMessage({ sentAtMs: T0 + 2, visibleAtMs: T0 + 2 }), newMessage({ sentAtMs: T0 + 3, visibleAtMs: T0 + 3 })] });
    expect(await depthOf(src, T0 + 10)).toEqual({ visible: 4, inFlight: 0, delayed: 1 });

    const got = (await messageReceive(store(), { queueId: src, max: 2, nowMs: T0 + 10, visibleUntilMs: T0 + 1_000, minSentAtMs: 0, receiptToken: "tok-depth-1" })).messages;
    expect(got).toHaveLength(2);
    expect(await depthOf(src, T0 + 10)).toEqual({ visible: 2, inFlight: 2, delayed: 1 });

    await messageDelete(store(), { queueId: src, receipts: [{ seq: got[0]!.seq, token: "tok-depth-1" }] });
    expect(await depthOf(src, T0 + 10)).toEqual({ visible: 2, inFlight: 1, delayed: 1 });

    // The other received message comes back after its lease and is dead-lettered on the next receive.
    const deadLetter = { queueId: dlq, maxReceiveCount: 1, sourceQueueName: "depth-src" };
    const again = await messageReceive(store(), { queueId: src, max: 10, nowMs: T0 + 2_000, visibleUntilMs: T0 + 3_000, minSentAtMs: 0, receiptToken: "tok-depth-2", deadLetter });
    expect(again.deadLetteredCount).toBe(1);
    expect(await depthOf(src, T0 + 2_000)).toEqual({ visible: 0, inFlight: 2, delayed: 1 });
    expect(await depthOf(dlq, T0 + 2_000)).toEqual({ visible: 1, inFlight: 0, delayed: 0 });

    const moved = await store().messageMove({ sourceQueueId: dlq, destinationQueueId: dest, max: 10, nowMs: T0 + 2_000, minSentAtMs: 0 });
    expect(moved.moved).toBe(1);
    expect(await depthOf(dlq, T0 + 2_000)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(await depthOf(dest, T0 + 2_000)).toEqual({ visible: 1, inFlight: 0, delayed: 0 });

    await store().messagePurge({ queueId: src, nowMs: T0 + 2_000 });
    expect(await depthOf(src, T0 + 2_000)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    await messageSend(store(), { queueId: src, messages: [newMessage()] });
    expect(await depthOf(src, T0 + 2_000)).toEqual({ visible: 1, inFlight: 0, delayed: 0 });

    await store().queueDelete({ id: dest, nowMs: T0 + 3_000 });
    const recreated = await makeQueue("depth-dest");
    expect(await depthOf(recreated, T0 + 3_000)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(await depthOf(src, T0 + 3_000)).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
  });

  test("queueDepth names the oldest visible message once retention has been applied", async () => {
    const q = await makeQueue("depth-oldest");
    await messageSend(store(), { queueId: q, messages: [newMessage({ sentAtMs: T0 - 500, visibleAtMs: T0 - 500 }), newMessage({ sentAtMs: T0, visibleAtMs: T0 })] });
    expect((await store().queueDepth({ queueId: q, nowMs: T0 + 10, minSentAtMs: 0 })).oldestVisibleSentAtMs).toBe(T0 - 500);
    await store().messageExpire({ queueId: q, minSentAtMs: T0 - 100, nowMs: T0 + 10 });
    expect(await store().queueDepth({ queueId: q, nowMs: T0 + 10, minSentAtMs: T0 - 100 })).toEqual({ visible: 1, inFlight: 0, delayed: 0, oldestVisibleSentAtMs: T0 });
  });

  test("queueDepth agrees with queueStats through job submits (with a handoff), leases, completions and failures", async () => {
    const queue = await kit.makeQueue("depth-jobs");
    const dlq = await kit.makeQueue("depth-jobs-dlq");
    await store().jobCreateMany({ items: [1, 2, 3, 4].map(() => newJobFor(queue)), nowMs: T0 });
    expect(await depthOf(queue.id, T0)).toEqual({ visible: 4, inFlight: 0, delayed: 0 });

    const handedOff = await kit.submit(queue, {}, undefined, { ...kit.leaseParams(queue, `${queue.id}.hand-aaaaaaaa`), max: 1 });
    expect(handedOff.handoff?.leased).toHaveLength(1);
    expect(await depthOf(queue.id, T0)).toEqual({ visible: 4, inFlight: 1, delayed: 0 });

    const token = `${queue.id}.lease-bbbbbbbb`;
    const leased = (await kit.lease(queue, { max: 2, token })).leased;
    expect(leased).toHaveLength(2);
    expect(await depthOf(queue.id, T0)).toEqual({ visible: 2, inFlight: 3, delayed: 0 });

    await act(store(), { kind: "complete", id: leased[0]!.id, leaseToken: token, nowMs: T0 + 1, outputJson: '"ok"', resultTtlSeconds: 60 });
    await act(store(), { kind: "fail", ...kit.policy(dlq), id: leased[1]!.id, leaseToken: token, nowMs: T0 + 1, error: { message: "boom" }, retryable: false });
    expect(await depthOf(queue.id, T0 + 1)).toEqual({ visible: 2, inFlight: 1, delayed: 0 });
    expect(await depthOf(dlq.id, T0 + 1)).toEqual({ visible: 1, inFlight: 0, delayed: 0 });
  });

  test("queueDepth through a second handle counts what the first one wrote", async () => {
    const q = await makeQueue("depth-two-handles");
    const other = await another();
    await messageSend(store(), { queueId: q, messages: [newMessage(), newMessage(), newMessage({ visibleAtMs: T0 + 60_000 })] });
    await messageReceive(other, { queueId: q, max: 1, nowMs: T0, visibleUntilMs: T0 + 30_000, minSentAtMs: 0, receiptToken: "tok-depth-other" });
    const fromOther = await other.queueDepth({ queueId: q, nowMs: T0, minSentAtMs: 0 });
    expect(fromOther).toEqual(await other.queueStats({ queueId: q, nowMs: T0, minSentAtMs: 0 }));
    expect(fromOther).toEqual(await store().queueDepth({ queueId: q, nowMs: T0, minSentAtMs: 0 }));
    expect(fromOther).toMatchObject({ visible: 1, inFlight: 1, delayed: 1 });
  });
}
