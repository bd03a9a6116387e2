/**
 * Conformance cases for a deep backlog's two cheap paths: retention in slices (messageExpire's
 * limit: the oldest sent first, each slice's jobs ended with it) and queueStats read from kept
 * counts, which must still be exact on every path that adds, hides, shows, moves or removes
 * messages, past retention and across a reopen.
 */
import { expect } from "vitest";
import { defaultQueueConfig } from "../../core/queue.js";
import type { QueueStats } from "../../core/store.js";
import { type ConformanceContext, T0, newMessage } from "./conformance-context.js";
import { jobCaseKit, newJobFor } from "./conformance-jobs-kit.js";
import { messageDelete, messageReceive, messageSend } from "./one-call.js";

export function registerBacklogCases({ store, reopen, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);
  async function makeQueue(name: string): Promise<number> {
    const { queue } = await store().queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    return queue.id;
  }
  const counts = (s: QueueStats): [number, number, number] => [s.visible, s.inFlight, s.delayed];

  test("queueHeld counts every message the queue holds and its bodies' UTF-8 bytes, on each path", async () => {
    const q = await makeQueue("held-counts");
    expect(await store().queueHeld({ queueId: q })).toEqual({ messages: 0, bytes: 0 });
    await messageSend(store(), { queueId: q, messages: ["abc", "héllo", "ok"].map((body) => newMessage({ body })) });
    expect(await store().queueHeld({ queueId: q })).toEqual({ messages: 3, bytes: 3 + 6 + 2 });
    // In flight is still held; a delete lets go of it.
    const { messages } = await messageReceive(store(), { queueId: q, max: 1, nowMs: T0, visibleUntilMs: T0 + 60_000, minSentAtMs: 0, receiptToken: "tok-held-1" });
    expect(await store().queueHeld({ queueId: q })).toEqual({ messages: 3, bytes: 11 });
    await messageDelete(store(), { queueId: q, receipts: [{ seq: messages[0]!.seq, token: "tok-held-1" }] });
    expect(await store().queueHeld({ queueId: q })).toEqual({ messages: 2, bytes: 11 - Buffer.byteLength(messages[0]!.body) });
    await store().messagePurge({ queueId: q, nowMs: T0 });
    expect(await store().queueHeld({ queueId: q })).toEqual({ messages: 0, bytes: 0 });
  });

  test("queueCount counts one account's queues", async () => {
    const before = await store().queueCount({ account: "444444444444" });
    for (const name of ["count-a", "count-b"]) await store().queueCreate({ account: "444444444444", name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    await store().queueCreate({ account: "555555555555", name: "count-a", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    expect(await store().queueCount({ account: "444444444444" })).toBe(before + 2);
    expect(await store().queueCount({ account: "555555555555" })).toBe(1);
  });

  test("messageExpire with a limit deletes the oldest sent first, that many at most, and leaves the rest", async () => {
    const q = await makeQueue("expire-slices");
    // Sent out of seq order: the slice follows send time, not insertion.
    const sentAt = [T0 - 300, T0 - 500, T0 - 100, T0 - 400, T0 - 200, T0];
    await messageSend(store(), { queueId: q, messages: sentAt.map((sentAtMs) => newMessage({ sentAtMs, visibleAtMs: sentAtMs, body: String(sentAtMs) })) });
    const remaining = async (): Promise<string[]> => (await store().messagePeek({ queueId: q, minSentAtMs: 0, limit: 10 })).map((m) => m.body).sort();
    expect(await store().messageExpire({ queueId: q, minSentAtMs: T0 - 50, nowMs: T0, limit: 2 })).toEqual({ deleted: 2, jobChanges: [] });
    expect(await remaining()).toEqual([T0 - 300, T0 - 200, T0 - 100, T0].map(String).sort());
    expect(await store().messageExpire({ queueId: q, minSentAtMs: T0 - 50, nowMs: T0, limit: 2 })).toEqual({ deleted: 2, jobChanges: [] });
    expect(await store().messageExpire({ queueId: q, minSentAtMs: T0 - 50, nowMs: T0, limit: 2 })).toEqual({ deleted: 1, jobChanges: [] });
    expect(await store().messageExpire({ queueId: q, minSentAtMs: T0 - 50, nowMs: T0, limit: 2 })).toEqual({ deleted: 0, jobChanges: [] });
    expect(await remaining()).toEqual([String(T0)]);
    expect(counts(await store().queueStats({ queueId: q, nowMs: T0, minSentAtMs: T0 - 50 }))).toEqual([1, 0, 0]);
  });

  test("retention and the counts reach a message past retention whether it is queued as sent, in flight, delayed or visible again", async () => {
    const q = await makeQueue("expire-shifted");
    const sentAt = (m: { sentAtMs: number }): number => m.sentAtMs;
    const queued = [T0 - 10_000, T0 - 8_000, T0 - 7_000].map((t) => newMessage({ sentAtMs: t, visibleAtMs: t, body: `queued ${t}` }));
    const fresh = newMessage({ sentAtMs: T0, visibleAtMs: T0, body: "fresh" });
    const freshDelayed = newMessage({ sentAtMs: T0, visibleAtMs: T0 + 500, body: "fresh, delayed" });
    await messageSend(store(), { queueId: q, messages: [...queued, fresh, freshDelayed] });
    // The two sent first go in flight; the second is made visible again at once.
    const got = (await messageReceive(store(), { queueId: q, max: 2, nowMs: T0, visibleUntilMs: T0 + 1_000, minSentAtMs: 0, receiptToken: "tok-shifted" })).messages;
    expect(got.map(sentAt)).toEqual([T0 - 10_000, T0 - 8_000]);
    expect(await store().messageChangeVisibility({ queueId: q, nowMs: T0, entries: [{ seq: got[1]!.seq, token: "tok-shifted", visibleAtMs: T0 }] })).toEqual(["changed"]);
    // Delayed past the end of its retention.
    await messageSend(store(), { queueId: q, messages: [newMessage({ sentAtMs: T0 - 9_000, visibleAtMs: T0 + 60_000, body: "delayed" })] });

    const minSentAtMs = T0 - 5_000;
    const stats = await store().queueStats({ queueId: q, nowMs: T0, minSentAtMs });
    expect(counts(stats)).toEqual([1, 0, 1]);
    expect(stats.oldestVisibleSentAtMs).toBe(T0);
    expect(await store().messageExpire({ queueId: q, minSentAtMs, nowMs: T0, limit: 3 })).toMatchObject({ deleted: 3 });
    expect(await store().messageExpire({ queueId: q, minSentAtMs, nowMs: T0, limit: 3 })).toMatchObject({ deleted: 1 });
    expect(await store().messageExpire({ queueId: q, minSentAtMs, nowMs: T0, limit: 3 })).toMatchObject({ deleted: 0 });
    const left = await store().messagePeek({ queueId: q, minSentAtMs: 0, limit: 10 });
    expect(left.map((m) => m.body).sort()).toEqual(["fresh", "fresh, delayed"]);
    expect(counts(await store().queueStats({ queueId: q, nowMs: T0, minSentAtMs }))).toEqual([1, 0, 1]);
  });

  test("a retention slice ends the jobs of the messages it deletes, and only those", async () => {
    const queue = await kit.makeQueue("expire-slice-jobs");
    await store().jobCreateMany({ items: [1, 2, 3].map(() => newJobFor(queue)), nowMs: T0 });
    const first = await store().messageExpire({ queueId: queue.id, minSentAtMs: T0 + 1, nowMs: T0 + 10, limit: 2 });
    expect(first.deleted).toBe(2);
    expect(first.jobChanges).toHaveLength(2);
    const second = await store().messageExpire({ queueId: queue.id, minSentAtMs: T0 + 1, nowMs: T0 + 10, limit: 2 });
    expect(second.deleted).toBe(1);
    expect(second.jobChanges).toHaveLength(1);
    const ended = [...first.jobChanges, ...second.jobChanges].map((c) => c.job.id);
    expect(new Set(ended).size).toBe(3);
  });

  test("queueStats stays exact through sends, receives, visibility changes, delays ending, deletes, retention, redrive, purges and a reopen", async () => {
    const q = await makeQueue("stats-exact");
    const dlq = await makeQueue("stats-exact-dlq");
    const at = (nowMs: number, minSentAtMs = 0, queueId = q): Promise<[number, number, number]> => store().queueStats({ queueId, nowMs, minSentAtMs }).then(counts);

    await messageSend(store(), { queueId: q, messages: [newMessage({ sentAtMs: T0 - 10_000, visibleAtMs: T0 - 10_000 }), newMessage(), newMessage(), newMessage({ visibleAtMs: T0 + 500 })] });
    expect(await at(T0)).toEqual([3, 0, 1]);
    // The oldest is past retention: counted nowhere, though upkeep has not deleted it yet.
    expect(await at(T0, T0 - 5_000)).toEqual([2, 0, 1]);
    expect((await store().queueStats({ queueId: q, nowMs: T0, minSentAtMs: T0 - 5_000 })).oldestVisibleSentAtMs).toBe(T0);

    const got = (await messageReceive(store(), { queueId: q, max: 2, nowMs: T0, visibleUntilMs: T0 + 1_000, minSentAtMs: T0 - 5_000, receiptToken: "tok-stats-1" })).messages;
    expect(got).toHaveLength(2);
    expect(await at(T0, T0 - 5_000)).toEqual([0, 2, 1]);
    // The delay ends: the delayed message is visible, with nothing written.
    expect(await at(T0 + 500, T0 - 5_000)).toEqual([1, 2, 0]);
    // A visibility change to now returns a message; its lease ending returns the other.
    expect(await store().messageChangeVisibility({ queueId: q, nowMs: T0 + 500, entries: [{ seq: got[0]!.seq, token: "tok-stats-1", visibleAtMs: T0 + 500 }] })).toEqual(["changed"]);
    expect(await at(T0 + 500, T0 - 5_000)).toEqual([2, 1, 0]);
    expect(await at(T0 + 1_000, T0 - 5_000)).toEqual([3, 0, 0]);

    const again = (await messageReceive(store(), { queueId: q, max: 1, nowMs: T0 + 1_000, visibleUntilMs: T0 + 2_000, minSentAtMs: T0 - 5_000, receiptToken: "tok-stats-2" })).messages;
    await messageDelete(store(), { queueId: q, receipts: [{ seq: again[0]!.seq, token: "tok-stats-2" }] });
    expect(await at(T0 + 1_000, T0 - 5_000)).toEqual([2, 0, 0]);
    expect(await store().messageExpire({ queueId: q, minSentAtMs: T0 - 5_000, nowMs: T0 + 1_000, limit: 10 })).toMatchObject({ deleted: 1 });
    expect(await at(T0 + 1_000, T0 - 5_000)).toEqual([2, 0, 0]);
    expect(await at(T0 + 1_000)).toEqual([2, 0, 0]);

    // Dead-lettered on a receive past maxReceiveCount, then redriven back.
    const deadLetter = { queueId: dlq, maxReceiveCount: 1, sourceQueueName: "stats-exact" };
    const dead = await messageReceive(store(), { queueId: q, max: 10, nowMs: T0 + 1_000, visibleUntilMs: T0 + 2_000, minSentAtMs: 0, receiptToken: "tok-stats-3", deadLetter });
    expect(dead.deadLetteredCount).toBeGreaterThan(0);
    expect((await at(T0 + 1_000))[0] + (await at(T0 + 1_000, 0, dlq))[0] + (await at(T0 + 1_000))[1]).toBe(2);
    const moved = await store().messageMove({ sourceQueueId: dlq, max: 10, nowMs: T0 + 3_000, minSentAtMs: 0 });
    expect(moved.moved).toBe(dead.deadLetteredCount);
    expect(await at(T0 + 3_000, 0, dlq)).toEqual([0, 0, 0]);
    expect(await at(T0 + 3_000)).toEqual([2, 0, 0]);

    const reopened = await reopen();
    expect(counts(await reopened.queueStats({ queueId: q, nowMs: T0 + 3_000, minSentAtMs: 0 }))).toEqual([2, 0, 0]);
    await reopened.messagePurge({ queueId: q, nowMs: T0 + 3_000 });
    expect(counts(await reopened.queueStats({ queueId: q, nowMs: T0 + 3_000, minSentAtMs: 0 }))).toEqual([0, 0, 0]);
  });
}
