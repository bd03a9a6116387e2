/**
 * Conformance cases for message groups: FIFO order and group locking, fair receives across groups,
 * FIFO deduplication, dead-lettering on receive and ReceiveRequestAttemptId replays.
 */
import { expect } from "vitest";
import { defaultQueueConfig } from "../../core/queue.js";
import type { DeadLetterTarget, ReceiveAttempt, SendDedup } from "../../core/store.js";
import { type ConformanceContext, newMessage } from "./conformance-context.js";
import { messageDelete, messageReceive, messageSend } from "./one-call.js";

const T0 = 1_700_000_000_000;
const windowMs = 5 * 60_000;

function dedupAt(nowMs: number, scope: SendDedup["scope"] = "queue"): SendDedup {
  return { scope, nowMs, expiresAtMs: nowMs + windowMs };
}

export function registerGroupCases({ store, test }: ConformanceContext): void {
  async function makeQueue(name: string, fifo = false): Promise<number> {
    const { queue } = await store().queueCreate({ name, config: defaultQueueConfig(fifo), tags: {}, nowMs: T0 });
    return queue.id;
  }

  interface ReceiveOptions {
    nowMs?: number;
    fifo?: boolean;
    token?: string;
    deadLetter?: DeadLetterTarget;
    attempt?: ReceiveAttempt;
    visibleForMs?: number;
  }

  async function receive(queueId: number, max: number, o: ReceiveOptions = {}) {
    const nowMs = o.nowMs ?? T0;
    return messageReceive(store(), {
      queueId,
      max,
      nowMs,
      visibleUntilMs: nowMs + (o.visibleForMs ?? 30_000),
      minSentAtMs: 0,
      receiptToken: o.token ?? "tok-groups-1",
      fifo: o.fifo,
      deadLetter: o.deadLetter,
      attempt: o.attempt,
    });
  }

  async function bodies(queueId: number, max: number, o: ReceiveOptions = {}): Promise<string[]> {
    return (await receive(queueId, max, o)).messages.map((m) => m.body);
  }

  test("dedup: a duplicate within the window is answered with the original and not enqueued", async () => {
    const id = await makeQueue("d.fifo", true);
    const [first] = await messageSend(store(), { queueId: id, dedup: dedupAt(T0), messages: [newMessage({ body: "one", groupId: "g", deduplicationId: "x" })] });
    expect(first!.duplicate).toBeFalsy();
    const sent = await messageSend(store(), {
      queueId: id,
      dedup: dedupAt(T0 + 1),
      messages: [newMessage({ body: "dup", groupId: "g", deduplicationId: "x" }), newMessage({ body: "two", groupId: "g", deduplicationId: "y" })],
    });
    expect(sent.map((m) => Boolean(m.duplicate))).toEqual([true, false]);
    expect(sent[0]!.messageId).toBe(first!.messageId);
    expect(sent[0]!.seq).toBe(first!.seq);
    expect(await bodies(id, 10, { fifo: true })).toEqual(["one", "two"]);
  });

  test("dedup: ids outlive their deleted message and expire after the window", async () => {
    const id = await makeQueue("d.fifo", true);
    await messageSend(store(), { queueId: id, dedup: dedupAt(T0), messages: [newMessage({ groupId: "g", deduplicationId: "x" })] });
    const { messages } = await receive(id, 1, { fifo: true, token: "tok-del-1" });
    expect(await messageDelete(store(), { queueId: id, receipts: [{ seq: messages[0]!.seq, token: "tok-del-1" }] })).toEqual({ deleted: [true], groupsReady: 0 });
    const [again] = await messageSend(store(), { queueId: id, dedup: dedupAt(T0 + windowMs - 1), messages: [newMessage({ groupId: "g", deduplicationId: "x" })] });
    expect(again!.duplicate).toBe(true);
    const [later] = await messageSend(store(), { queueId: id, dedup: dedupAt(T0 + windowMs), messages: [newMessage({ groupId: "g", deduplicationId: "x" })] });
    expect(later!.duplicate).toBeFalsy();
  });

  test("dedup: messageGroup scope deduplicates per group", async () => {
    const id = await makeQueue("d.fifo", true);
    const send = (groupIds: string[]) => messageSend(store(), { queueId: id, dedup: dedupAt(T0, "messageGroup"), messages: groupIds.map((groupId) => newMessage({ groupId, deduplicationId: "x" })) });
    const sent = await send(["a", "b"]);
    expect(sent.map((m) => Boolean(m.duplicate))).toEqual([false, false]);
    const [again] = await send(["a"]);
    expect(again).toMatchObject({ duplicate: true, seq: sent[0]!.seq });
  });

  test("FIFO: strict order within a group, several per receive, no delivery while one is in flight", async () => {
    const id = await makeQueue("f.fifo", true);
    await messageSend(store(), {
      queueId: id,
      messages: ["a1", "a2", "a3"].map((body) => newMessage({ body, groupId: "a" })).concat([newMessage({ body: "b1", groupId: "b" })]),
    });
    const first = await receive(id, 2, { fifo: true, token: "tok-fifo-1" });
    expect(first.messages.map((m) => m.body)).toEqual(["a1", "a2"]);
    // Group a is locked while a1/a2 are in flight; b proceeds.
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 1 })).toEqual(["b1"]);
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 2 })).toEqual([]);
    // a1 is still in flight: this delete unblocks nothing, so it reports no ready group.
    expect(await messageDelete(store(), { queueId: id, nowMs: T0 + 3, receipts: [{ seq: first.messages[1]!.seq, token: "tok-fifo-1" }] })).toEqual({ deleted: [true], groupsReady: 0 });
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 3 })).toEqual([]);
    // Now a3 heads group a and is visible: one group a receive can take.
    expect(await messageDelete(store(), { queueId: id, nowMs: T0 + 4, receipts: [{ seq: first.messages[0]!.seq, token: "tok-fifo-1" }] })).toEqual({ deleted: [true], groupsReady: 1 });
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 4 })).toEqual(["a3"]);
  });

  test("FIFO: a receive starts from the oldest available group and takes as many of it as it can", async () => {
    const id = await makeQueue("o.fifo", true);
    // Group names sort the other way round from their age: the order must come from the messages.
    const send = (body: string, groupId: string) => messageSend(store(), { queueId: id, messages: [newMessage({ body, groupId })] });
    for (const [body, group] of [["z1", "z"], ["z2", "z"], ["z3", "z"], ["a1", "a"], ["m1", "m"], ["a2", "a"]] as const) await send(body, group);
    const first = await receive(id, 2, { fifo: true, token: "tok-old-1" });
    expect(first.messages.map((m) => m.body)).toEqual(["z1", "z2"]);
    // z is locked: the next oldest group is a, then m; a receive fills up across groups, each in order.
    expect(await bodies(id, 10, { fifo: true, token: "tok-old-2", visibleForMs: 1_000 })).toEqual(["a1", "a2", "m1"]);
    // Once z's two are deleted, z3 heads it, older than anything else: it comes first again.
    await messageDelete(store(), { queueId: id, receipts: first.messages.map((m) => ({ seq: m.seq, token: "tok-old-1" })) });
    await send("m2", "m");
    expect(await bodies(id, 1, { fifo: true, nowMs: T0 + 1_000, token: "tok-old-3" })).toEqual(["z3"]);
    // a and m came back visible (their lease ended): a's head is older than m's.
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 1_000, token: "tok-old-4" })).toEqual(["a1", "a2", "m1", "m2"]);
  });

  test("FIFO: messageDelete counts the groups it unblocked: each once, none empty, in flight or delayed", async () => {
    const id = await makeQueue("r.fifo", true);
    const send = (body: string, groupId: string, visibleAtMs = T0) => messageSend(store(), { queueId: id, messages: [newMessage({ body, groupId, visibleAtMs })] });
    for (const [body, group] of [["a1", "a"], ["a2", "a"], ["a3", "a"], ["b1", "b"], ["c1", "c"], ["d1", "d"], ["d2", "d"], ["d3", "d"]] as const) await send(body, group);
    await send("c2", "c", T0 + 60_000);
    const got = await receive(id, 10, { fifo: true, token: "tok-ready" });
    const receipt = (body: string) => ({ seq: got.messages.find((m) => m.body === body)!.seq, token: "tok-ready" });
    expect(got.messages.map((m) => m.body).sort()).toEqual(["a1", "a2", "a3", "b1", "c1", "d1", "d2", "d3"]);
    // a: a3 still in flight; b: now empty; c: c2 still delayed. None of them is ready.
    const none = await messageDelete(store(), { queueId: id, nowMs: T0 + 1, receipts: ["a1", "a2", "b1", "c1"].map(receipt) });
    expect(none).toEqual({ deleted: [true, true, true, true], groupsReady: 0 });
    // d: more messages arrive behind the run in flight; deleting all of the run unblocks d once.
    await send("d4", "d");
    await send("d5", "d");
    const d = await messageDelete(store(), { queueId: id, nowMs: T0 + 2, receipts: ["d1", "d2", "d3"].map(receipt) });
    expect(d).toEqual({ deleted: [true, true, true], groupsReady: 1 });
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 3 })).toEqual(["d4", "d5"]);
    // Without nowMs nothing is counted (standard queues don't need wake-ups on delete).
    expect(await messageDelete(store(), { queueId: id, receipts: [receipt("a3")] })).toEqual({ deleted: [true], groupsReady: 0 });
  });

  test("FIFO: messageDelete with refuseExpired deletes only within the lease and reports the handles whose lease ended", async () => {
    const id = await makeQueue("x.fifo", true);
    await messageSend(store(), { queueId: id, messages: ["a1", "b1", "c1"].map((body) => newMessage({ body, groupId: body[0]! })) });
    // Leases end at T0 + 100.
    const got = await receive(id, 10, { fifo: true, token: "tok-exp-1", visibleForMs: 100 });
    const seq = (body: string) => got.messages.find((m) => m.body === body)!.seq;
    // Within the lease (T0 + 99): deleted. Listed twice: the second finds it gone, not expired.
    expect(await messageDelete(store(), { queueId: id, nowMs: T0 + 99, refuseExpired: true, receipts: [{ seq: seq("a1"), token: "tok-exp-1" }, { seq: seq("a1"), token: "tok-exp-1" }] })).toEqual({
      deleted: [true, false],
      groupsReady: 0,
      expired: [false, false],
    });
    // At T0 + 100 b1 and c1 are visible again: their handle has expired, and they stay.
    expect(await messageDelete(store(), { queueId: id, nowMs: T0 + 100, refuseExpired: true, receipts: [{ seq: seq("b1"), token: "tok-exp-1" }] })).toEqual({
      deleted: [false],
      groupsReady: 0,
      expired: [true],
    });
    // c1 is received again: the first handle has expired too (and the new one still deletes).
    const again = await receive(id, 10, { fifo: true, nowMs: T0 + 100, token: "tok-exp-2", visibleForMs: 100 });
    expect(again.messages.map((m) => m.body).sort()).toEqual(["b1", "c1"]);
    expect(
      await messageDelete(store(), {
        queueId: id,
        nowMs: T0 + 101,
        refuseExpired: true,
        receipts: [{ seq: seq("c1"), token: "tok-exp-1" }, { seq: 999_999_999, token: "tok-exp-1" }, { seq: seq("b1"), token: "tok-exp-2" }],
      }),
    ).toEqual({ deleted: [false, false, true], groupsReady: 0, expired: [true, false, false] });
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 200 })).toEqual(["c1"]);
    // Without refuseExpired a matching token deletes whatever the time (standard queues).
    const late = await receive(id, 10, { fifo: true, nowMs: T0 + 40_000, token: "tok-exp-3", visibleForMs: 100 });
    expect(await messageDelete(store(), { queueId: id, nowMs: T0 + 40_200, receipts: [{ seq: late.messages[0]!.seq, token: "tok-exp-3" }] })).toEqual({ deleted: [true], groupsReady: 0 });
  });

  test("FIFO: a message whose visibility expired is delivered again before later ones of its group", async () => {
    const id = await makeQueue("f.fifo", true);
    await messageSend(store(), { queueId: id, messages: ["a1", "a2"].map((body) => newMessage({ body, groupId: "a" })) });
    expect(await bodies(id, 1, { fifo: true, visibleForMs: 1_000 })).toEqual(["a1"]);
    expect(await bodies(id, 1, { fifo: true, nowMs: T0 + 500 })).toEqual([]);
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 1_000 })).toEqual(["a1", "a2"]);
  });

  test("FIFO: a delayed message keeps its place in its group", async () => {
    const id = await makeQueue("f.fifo", true);
    await messageSend(store(), { queueId: id, messages: [newMessage({ body: "a1", groupId: "a", visibleAtMs: T0 + 5_000 }), newMessage({ body: "a2", groupId: "a" })] });
    expect(await bodies(id, 10, { fifo: true })).toEqual([]);
    expect(await bodies(id, 10, { fifo: true, nowMs: T0 + 5_000 })).toEqual(["a1", "a2"]);
  });

  test("fair: a group's backlog does not starve a group with a few messages", async () => {
    const id = await makeQueue("fair");
    await messageSend(store(), { queueId: id, messages: Array.from({ length: 300 }, (_, i) => newMessage({ body: `A${i}`, groupId: "A" })) });
    await messageSend(store(), { queueId: id, messages: Array.from({ length: 5 }, (_, i) => newMessage({ body: `B${i}`, groupId: "B" })) });
    const got: string[] = [];
    for (let i = 0; i < 10; i++) got.push(...(await bodies(id, 1, { token: `tok-fair-${i}` })));
    expect(got.filter((b) => b.startsWith("B"))).toEqual(["B0", "B1", "B2", "B3", "B4"]);
    // A receive of 10 takes one message per group per round.
    const batch = await bodies(id, 10, { token: "tok-fair-batch" });
    expect(batch).toHaveLength(10);
  });

  test("fair: priority orders messages within a group; ungrouped messages are one more flow", async () => {
    const id = await makeQueue("fair");
    await messageSend(store(), {
      queueId: id,
      messages: [
        newMessage({ body: "A-low", groupId: "A", priority: 0 }),
        newMessage({ body: "A-high", groupId: "A", priority: 9 }),
        ...Array.from({ length: 5 }, (_, i) => newMessage({ body: `plain${i}` })),
      ],
    });
    const got = await bodies(id, 4);
    expect(got).toContain("A-high");
    expect(got.indexOf("A-high")).toBeLessThan(got.indexOf("A-low") === -1 ? 99 : got.indexOf("A-low"));
    expect(got.filter((b) => b.startsWith("plain")).length).toBeGreaterThanOrEqual(1);
    expect(got.filter((b) => b.startsWith("A")).length).toBe(2);
  });

  test("fair: once a queue's groups are gone, receives are in plain priority order again", async () => {
    const id = await makeQueue("fair");
    await messageSend(store(), { queueId: id, messages: [newMessage({ body: "g", groupId: "A" })] });
    await store().messagePurge({ queueId: id, nowMs: T0 });
    await messageSend(store(), { queueId: id, messages: [newMessage({ body: "p0", priority: 0 }), newMessage({ body: "p9", priority: 9 })] });
    expect(await bodies(id, 10)).toEqual(["p9", "p0"]);
  });

  test("dead-letter: a message received maxReceiveCount times moves instead of being delivered", async () => {
    const src = await makeQueue("src");
    const dlq = await makeQueue("dlq");
    const [sent] = await messageSend(store(), { queueId: src, messages: [newMessage({ body: "poison", sentAtMs: T0 - 10 }), newMessage({ body: "fine", visibleAtMs: T0 + 250_000 })] });
    const deadLetter: DeadLetterTarget = { queueId: dlq, maxReceiveCount: 2, sourceQueueName: "src" };
    for (let i = 0; i < 2; i++) {
      const r = await receive(src, 1, { nowMs: T0 + i * 100_000, deadLetter, token: `tok-dl-${i}` });
      expect(r.messages.map((m) => m.body)).toEqual(["poison"]);
    }
    const third = await receive(src, 10, { nowMs: T0 + 300_000, deadLetter, token: "tok-dl-3" });
    expect(third.deadLetteredCount).toBe(1);
    expect(third.messages.map((m) => m.body)).toEqual(["fine"]);
    const [moved] = (await receive(dlq, 10, { nowMs: T0 + 300_001 })).messages;
    expect(moved!.messageId).toBe(sent!.messageId);
    expect(moved!.body).toBe("poison");
    expect(moved!.sentAtMs).toBe(T0 - 10);
    expect(moved!.receiveCount).toBe(1);
    expect(moved!.deadLetterSourceQueueName).toBe("src");
  });

  test("dead-letter: a FIFO group moves past a dead-lettered message in order", async () => {
    const src = await makeQueue("src.fifo", true);
    const dlq = await makeQueue("dlq.fifo", true);
    await messageSend(store(), { queueId: src, messages: ["a1", "a2"].map((body) => newMessage({ body, groupId: "a" })) });
    const deadLetter: DeadLetterTarget = { queueId: dlq, maxReceiveCount: 1, sourceQueueName: "src.fifo" };
    expect((await receive(src, 1, { fifo: true, deadLetter, visibleForMs: 10 })).messages.map((m) => m.body)).toEqual(["a1"]);
    const r = await receive(src, 10, { fifo: true, deadLetter, nowMs: T0 + 10 });
    expect(r.deadLetteredCount).toBe(1);
    expect(r.messages.map((m) => m.body)).toEqual(["a2"]);
    const fromDlq = (await receive(dlq, 10, { fifo: true, nowMs: T0 + 11 })).messages;
    expect(fromDlq.map((m) => [m.body, m.groupId])).toEqual([["a1", "a"]]);
  });

  test("dead-letter: a target deleted since it was resolved is no target: the message is delivered (plain, fair, FIFO)", async () => {
    // Each source holds a message already received once, due to move at maxReceiveCount 1.
    for (const [kind, groupId, fifo] of [
      ["plain", undefined, false],
      ["fair", "g", false],
      ["fifo", "g", true],
    ] as const) {
      const suffix = fifo ? ".fifo" : "";
      const src = await makeQueue(`${kind}-src${suffix}`, fifo);
      const dlq = await makeQueue(`${kind}-dlq${suffix}`, fifo);
      await messageSend(store(), { queueId: src, messages: [newMessage({ body: `${kind}-poison`, groupId })] });
      expect(await bodies(src, 1, { fifo, visibleForMs: 10, token: `tok-${kind}-1` })).toEqual([`${kind}-poison`]);
      await store().queueDelete({ id: dlq, nowMs: T0 });
      const deadLetter: DeadLetterTarget = { queueId: dlq, maxReceiveCount: 1, sourceQueueName: `${kind}-src${suffix}` };
      const r = await receive(src, 10, { fifo, deadLetter, nowMs: T0 + 10, token: `tok-${kind}-2` });
      expect([kind, r.deadLetteredCount, r.messages.map((m) => [m.body, m.receiveCount])]).toEqual([kind, 0, [[`${kind}-poison`, 2]]]);
    }
  });

  test("attempt: a retried receive returns the same messages and receipts while they are in flight", async () => {
    const id = await makeQueue("f.fifo", true);
    await messageSend(store(), { queueId: id, messages: ["a1", "a2", "b1"].map((body) => newMessage({ body, groupId: body[0] })) });
    const attempt: ReceiveAttempt = { attemptId: "try-1", expiresAtMs: T0 + windowMs };
    const first = await receive(id, 2, { fifo: true, attempt, token: "tok-attempt-1" });
    const retry = await receive(id, 2, { fifo: true, attempt, token: "tok-attempt-2", nowMs: T0 + 5 });
    expect(retry.messages.map((m) => [m.seq, m.receiptToken])).toEqual(first.messages.map((m) => [m.seq, m.receiptToken]));
    // Another attempt id gets other messages.
    const other = await receive(id, 2, { fifo: true, attempt: { attemptId: "try-2", expiresAtMs: T0 + windowMs }, token: "tok-attempt-3", nowMs: T0 + 6 });
    expect(other.messages.map((m) => m.body)).toEqual(["b1"]);
  });
}
