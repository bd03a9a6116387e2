/**
 * The store conformance suite: every Store implementation runs these same cases
 * (`describeStoreConformance("sqlite", factory)`). Every case holds for any correct store, whether
 * it commits each call on its own or several together; the two-handle cases open a second handle
 * on the same database, as a second node would. A store that cannot support a case lists it in
 * `skip` with the reason, so gaps are explicit, never silent. docs/writing-a-store.md says more.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../core/queue.js";
import type { Store } from "../../core/store.js";
import { type ConformanceContext, type StoreFactory, type StoreHandle, T0, newMessage } from "./conformance-context.js";
import { registerAccountCases } from "./conformance-accounts.js";
import { registerAdminCases } from "./conformance-admin.js";
import { registerBacklogCases } from "./conformance-backlog.js";
import { registerDepthCases } from "./conformance-depth.js";
import { registerEventLogCases } from "./conformance-events.js";
import { registerGroupCases } from "./conformance-groups.js";
import { registerJobFlowCases } from "./conformance-job-flows.js";
import { registerJobCases } from "./conformance-jobs.js";
import { registerMoveTaskCases } from "./conformance-move-tasks.js";
import { registerOutputCases } from "./conformance-output.js";
import { registerRequirementCases } from "./conformance-requirements.js";
import { registerScheduleCases } from "./conformance-schedules.js";
import { registerBatchCases } from "./conformance-batches.js";
import { registerBlobCases } from "./conformance-blobs.js";
import { registerTwoHandleCases } from "./conformance-two-handles.js";
import { registerWorkerCases } from "./conformance-workers.js";
import { messageDelete, messageReceive, messageSend } from "./one-call.js";

export { type ConformanceContext, type StoreFactory, type StoreHandle, newMessage } from "./conformance-context.js";

/**
 * `refused`: cases of features this store refuses (title → why). Each still runs, and must fail
 * with UnsupportedOperation: a store may lack a feature, never ignore it.
 */
export function describeStoreConformance(name: string, factory: StoreFactory, skip: Record<string, string> = {}, refused: Record<string, string> = {}): void {
  describe(`Store conformance: ${name}`, () => {
    let handle: StoreHandle;
    let store: Store;

    beforeEach(async () => {
      handle = await factory();
      store = handle.store;
    });
    afterEach(async () => {
      await handle.cleanup();
    });

    const test = (title: string, fn: () => Promise<void>): void => {
      if (skip[title]) it.skip(`${title} (skipped: ${skip[title]})`, fn);
      else if (refused[title]) it(`${title}: refused (${refused[title]})`, () => expect(fn()).rejects.toMatchObject({ code: "UnsupportedOperation" }));
      else it(title, fn);
    };

    async function makeQueue(queueName = "q"): Promise<number> {
      const { queue } = await store.queueCreate({ name: queueName, config: defaultQueueConfig(false), tags: { team: "ml" }, nowMs: T0 });
      return queue.id;
    }

    async function receive(queueId: number, max: number, nowMs = T0, visibleUntilMs = nowMs + 30_000, receiptToken = "tok-aaaaaaaa") {
      return (await messageReceive(store, { queueId, max, nowMs, visibleUntilMs, minSentAtMs: 0, receiptToken })).messages;
    }

    test("queueCreate creates once and returns the existing queue unchanged", async () => {
      const first = await store.queueCreate({ name: "a", config: defaultQueueConfig(false), tags: { k: "v" }, nowMs: T0 });
      expect(first.created).toBe(true);
      const other = { ...defaultQueueConfig(false), delaySeconds: 5 };
      const second = await store.queueCreate({ name: "a", config: other, tags: {}, nowMs: T0 + 1 });
      expect(second.created).toBe(false);
      expect(second.queue.id).toBe(first.queue.id);
      expect(second.queue.config.delaySeconds).toBe(0);
      expect(second.queue.tags).toEqual({ k: "v" });
      expect(second.queue.createdAtMs).toBe(T0);
    });

    test("queueList pages by name with a prefix", async () => {
      for (const n of ["b2", "a1", "b1", "b3", "c1"]) await store.queueCreate({ name: n, config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
      expect((await store.queueList({ limit: 10 })).map((q) => q.name)).toEqual(["a1", "b1", "b2", "b3", "c1"]);
      expect((await store.queueList({ prefix: "b", limit: 2 })).map((q) => q.name)).toEqual(["b1", "b2"]);
      expect((await store.queueList({ prefix: "b", afterName: "b2", limit: 2 })).map((q) => q.name)).toEqual(["b3"]);
    });

    test("queueUpdate changes config and tags; a purge records its time and refuses another in the window", async () => {
      const id = await makeQueue();
      await store.queueUpdate({ id, config: { ...defaultQueueConfig(false), visibilityTimeoutSeconds: 99 }, nowMs: T0 + 5 });
      await store.queueUpdate({ id, tags: { a: "b" }, nowMs: T0 + 6 });
      expect(await store.messagePurge({ queueId: id, nowMs: T0 + 6, refuseIfPurgedAfterMs: T0 + 6 - 60_000 })).toEqual({ deleted: 0, jobChanges: [] });
      expect(await store.messagePurge({ queueId: id, nowMs: T0 + 7, refuseIfPurgedAfterMs: T0 + 7 - 60_000 })).toBeUndefined();
      const q = (await store.queueGet({ name: "q" }))!;
      expect(q.config.visibilityTimeoutSeconds).toBe(99);
      expect(q.tags).toEqual({ a: "b" });
      expect(q.purgedAtMs).toBe(T0 + 6);
      expect(q.updatedAtMs).toBe(T0 + 6);
    });

    test("queueDelete removes the queue and its messages and leaves a tombstone", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: [newMessage()] });
      expect(await store.queueDeletedAt({ name: "q" })).toBeUndefined();
      await store.queueDelete({ id, nowMs: T0 + 10 });
      expect(await store.queueGet({ name: "q" })).toBeUndefined();
      expect(await store.queueDeletedAt({ name: "q" })).toBe(T0 + 10);
      const again = await makeQueue();
      expect(again).not.toBe(id);
      expect(await receive(again, 10)).toEqual([]);
    });

    test("messageSend assigns strictly increasing seqs and keeps every field", async () => {
      const id = await makeQueue();
      const bin = new Uint8Array([0, 1, 2, 255]);
      const sent = await messageSend(store, {
        queueId: id,
        messages: [
          newMessage({ attributes: { s: { dataType: "String", stringValue: "x" }, b: { dataType: "Binary", binaryValue: bin } }, attributesMd5: "abc" }),
          newMessage({ groupId: "g", deduplicationId: "d" }),
        ],
      });
      expect(sent[1]!.seq).toBeGreaterThan(sent[0]!.seq);
      const got = await receive(id, 10);
      expect(got).toHaveLength(2);
      expect(got[0]!.attributes.s).toEqual({ dataType: "String", stringValue: "x" });
      expect(Array.from(got[0]!.attributes.b!.binaryValue!)).toEqual([0, 1, 2, 255]);
      expect(got[0]!.attributesMd5).toBe("abc");
      expect(got[1]!.groupId).toBe("g");
      expect(got[1]!.deduplicationId).toBe("d");
      expect(got[0]!.seq).toBe(sent[0]!.seq);
      expect(got[0]!.messageId).toBe(sent[0]!.messageId);
    });

    test("messageReceive leases: hides the message, counts receives, records first receive", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: [newMessage()] });
      const [m] = await receive(id, 1, T0 + 100, T0 + 1000, "token-one-1");
      expect(m!.receiveCount).toBe(1);
      expect(m!.firstReceivedAtMs).toBe(T0 + 100);
      expect(m!.receiptToken).toBe("token-one-1");
      expect(await receive(id, 1, T0 + 999)).toEqual([]);
      const [again] = await receive(id, 1, T0 + 1000, T0 + 2000, "token-two-2");
      expect(again!.receiveCount).toBe(2);
      expect(again!.firstReceivedAtMs).toBe(T0 + 100);
      expect(again!.receiptToken).toBe("token-two-2");
    });

    test("messageReceive orders by priority, then by when messages became visible", async () => {
      const id = await makeQueue();
      await messageSend(store, {
        queueId: id,
        messages: [
          newMessage({ body: "low-old", priority: 0, visibleAtMs: T0 }),
          newMessage({ body: "high", priority: 9, visibleAtMs: T0 + 5 }),
          newMessage({ body: "low-new", priority: 0, visibleAtMs: T0 + 1 }),
          newMessage({ body: "mid", priority: 5, visibleAtMs: T0 }),
          newMessage({ body: "delayed-high", priority: 9, visibleAtMs: T0 + 60_000 }),
        ],
      });
      const got = await receive(id, 10, T0 + 10);
      expect(got.map((m) => m.body)).toEqual(["high", "mid", "low-old", "low-new"]);
    });

    test("messageReceive respects max and never returns messages past retention", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: [newMessage({ sentAtMs: T0 - 10_000 }), newMessage(), newMessage(), newMessage()] });
      const { messages: got } = await messageReceive(store, { queueId: id, max: 2, nowMs: T0, visibleUntilMs: T0 + 1, minSentAtMs: T0 - 5_000, receiptToken: "tok-aaaaaaaa" });
      expect(got).toHaveLength(2);
      expect(got.every((m) => m.sentAtMs >= T0 - 5_000)).toBe(true);
    });

    test("messageDelete deletes only with the current receipt token", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: [newMessage()] });
      const [first] = await receive(id, 1, T0, T0 + 10, "old-token-1");
      const [second] = await receive(id, 1, T0 + 10, T0 + 20, "new-token-2");
      expect(await messageDelete(store, { queueId: id, receipts: [{ seq: first!.seq, token: "old-token-1" }] })).toEqual({ deleted: [false], groupsReady: 0 });
      expect(await messageDelete(store, { queueId: id, receipts: [{ seq: second!.seq, token: "new-token-2" }] })).toEqual({ deleted: [true], groupsReady: 0 });
      expect(await receive(id, 1, T0 + 1_000_000)).toEqual([]);
    });

    test("messageDelete and messageChangeVisibility with anyReceipt take a receipt from any receive of the message", async () => {
      const id = await makeQueue();
      const other = await makeQueue("other");
      await messageSend(store, { queueId: id, messages: [newMessage()] });
      const [first] = await receive(id, 1, T0, T0 + 10, "any-old-token-1");
      const [second] = await receive(id, 1, T0 + 10, T0 + 20, "any-new-token-2");
      expect(second!.seq).toBe(first!.seq);
      const old = { seq: first!.seq, token: "any-old-token-1" };
      // Without anyReceipt the first receive's token no longer addresses the message.
      expect(await store.messageChangeVisibility({ queueId: id, nowMs: T0 + 11, entries: [{ ...old, visibleAtMs: T0 + 100 }] })).toEqual(["notFound"]);
      // With it, it changes the current lease: hidden past the second receive's T0 + 20.
      expect(await store.messageChangeVisibility({ queueId: id, nowMs: T0 + 11, anyReceipt: true, entries: [{ ...old, visibleAtMs: T0 + 100 }] })).toEqual(["changed"]);
      expect(await receive(id, 10, T0 + 50)).toEqual([]);
      // Another queue's message is not its to change or delete.
      expect(await store.messageChangeVisibility({ queueId: other, nowMs: T0 + 51, anyReceipt: true, entries: [{ ...old, visibleAtMs: T0 }] })).toEqual(["notFound"]);
      expect(await messageDelete(store, { queueId: other, anyReceipt: true, receipts: [old] })).toEqual({ deleted: [false], groupsReady: 0 });
      // It deletes the message; listed again, or again with the other receipt, it deletes nothing more.
      expect(await messageDelete(store, { queueId: id, anyReceipt: true, receipts: [old, old] })).toEqual({ deleted: [true, false], groupsReady: 0 });
      expect(await messageDelete(store, { queueId: id, anyReceipt: true, receipts: [{ seq: second!.seq, token: "any-new-token-2" }] })).toEqual({ deleted: [false], groupsReady: 0 });
      expect(await receive(id, 10, T0 + 1_000_000)).toEqual([]);
    });

    test("messageReceive returns new objects that the caller may change", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: [newMessage({ body: "mine" })] });
      const [first] = await receive(id, 1, T0, T0 + 10, "token-own-1");
      first!.body = "changed by the caller";
      first!.attributes.added = { dataType: "String", stringValue: "x" };
      const [again] = await receive(id, 1, T0 + 10, T0 + 20, "token-own-2");
      expect(again!.body).toBe("mine");
      expect(again!.attributes).toEqual({});
    });

    test("messageSend of many messages returns each one's own seq, in order", async () => {
      const id = await makeQueue();
      const messages = Array.from({ length: 23 }, (_, i) => newMessage({ body: `many-${i}` }));
      const sent = await messageSend(store, { queueId: id, messages });
      expect(sent.map((s) => s.messageId)).toEqual(messages.map((m) => m.messageId));
      expect(new Set(sent.map((s) => s.seq)).size).toBe(23);
      const received: Array<{ seq: number; messageId: string; body: string }> = [];
      for (let round = 0; round < 3; round++) received.push(...(await receive(id, 10)));
      expect(received).toHaveLength(23);
      for (const m of received) {
        const i = sent.findIndex((s) => s.seq === m.seq);
        expect(sent[i]!.messageId).toBe(m.messageId);
        expect(m.body).toBe(`many-${i}`);
      }
    });

    test("messageDelete answers each entry of a batch in order, as if deleted one by one", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: Array.from({ length: 14 }, () => newMessage()) });
      const a = await receive(id, 12, T0, T0 + 10, "token-batch-a");
      const b = await receive(id, 2, T0, T0 + 10, "token-batch-b");
      expect(a).toHaveLength(12);
      const entries = [
        ...a.map((m) => ({ seq: m.seq, token: "token-batch-a" })), // 12 with one token: more than one statement's worth
        { seq: b[0]!.seq, token: "token-batch-a" }, // another receive's message under the wrong token
        { seq: b[0]!.seq, token: "token-batch-b" }, // then under its own
        { seq: a[0]!.seq, token: "token-batch-a" }, // listed twice: the first entry deleted it
        { seq: 999_999_999, token: "token-batch-b" }, // no such message
      ];
      const { deleted } = await messageDelete(store, { queueId: id, receipts: entries });
      expect(deleted).toEqual([...a.map(() => true), false, true, false, false]);
      // b[1] is still there, in flight; nothing else is.
      const left = await receive(id, 10, T0 + 1_000_000);
      expect(left.map((m) => m.seq)).toEqual([b[1]!.seq]);
    });

    test("messageDelete of a different queue's message deletes nothing", async () => {
      const a = await makeQueue("a");
      const b = await makeQueue("b");
      await messageSend(store, { queueId: a, messages: [newMessage()] });
      const [m] = await receive(a, 1, T0, T0 + 10, "token-aaaa");
      expect(await messageDelete(store, { queueId: b, receipts: [{ seq: m!.seq, token: "token-aaaa" }] })).toEqual({ deleted: [false], groupsReady: 0 });
      expect(await receive(a, 1, T0 + 10)).toHaveLength(1);
    });

    test("messageChangeVisibility reports changed, notFound and notInFlight", async () => {
      const id = await makeQueue();
      const [sent] = await messageSend(store, { queueId: id, messages: [newMessage(), newMessage()] });
      const got = await receive(id, 1, T0, T0 + 30_000, "token-cv-1");
      const m = got[0]!;
      const results = await store.messageChangeVisibility({
        queueId: id,
        nowMs: T0 + 1,
        entries: [
          { seq: m.seq, token: "token-cv-1", visibleAtMs: T0 + 1 },
          { seq: m.seq, token: "wrong-token", visibleAtMs: T0 },
          { seq: 999_999, token: "token-cv-1", visibleAtMs: T0 },
        ],
      });
      expect(results).toEqual(["changed", "notFound", "notFound"]);
      expect(sent!.seq).toBe(m.seq);
      // Now visible again (visibleAt = T0+1): changing it is "not in flight".
      expect(await store.messageChangeVisibility({ queueId: id, nowMs: T0 + 2, entries: [{ seq: m.seq, token: "token-cv-1", visibleAtMs: T0 + 100 }] })).toEqual(["notInFlight"]);
      const again = await receive(id, 10, T0 + 2);
      expect(again.map((x) => x.seq)).toContain(m.seq);
    });

    test("messageNextVisibleAt finds the earliest future visibility", async () => {
      const id = await makeQueue();
      expect(await store.messageNextVisibleAt({ queueId: id, nowMs: T0 })).toBeUndefined();
      await messageSend(store, { queueId: id, messages: [newMessage({ visibleAtMs: T0 + 5000 }), newMessage({ visibleAtMs: T0 + 2000 }), newMessage()] });
      expect(await store.messageNextVisibleAt({ queueId: id, nowMs: T0 })).toBe(T0 + 2000);
    });

    test("queueStats counts visible, in flight and delayed", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: [newMessage(), newMessage(), newMessage(), newMessage({ visibleAtMs: T0 + 9000 })] });
      await receive(id, 1, T0, T0 + 5000);
      expect(await store.queueStats({ queueId: id, nowMs: T0, minSentAtMs: 0 })).toEqual({ visible: 2, inFlight: 1, delayed: 1, oldestVisibleSentAtMs: T0 });
    });

    test("messageSendMany: a send to a queue deleted since its record was read is refused alone (queueGone) and writes nothing", async () => {
      const id = await makeQueue();
      const { queue: fifo } = await store.queueCreate({ name: "f.fifo", config: defaultQueueConfig(true), tags: {}, nowMs: T0 });
      await store.queueDelete({ id, nowMs: T0 });
      const live = await makeQueue();
      const outcomes = await store.messageSendMany({ sends: [{ queueId: id, messages: [newMessage(), newMessage()] }, { queueId: live, messages: [newMessage()] }] });
      expect(outcomes[0]).toBe("queueGone");
      expect(outcomes[1]).toHaveLength(1);
      // The race itself: a delete and a send (both callers held the record) fired together. A store
      // that commits them in order refuses the send; one that runs them on separate connections may
      // commit the send first, and the delete then takes its message along. Either way nothing stays.
      const [, raced] = await Promise.allSettled([
        store.queueDelete({ id: fifo.id, nowMs: T0 }),
        store.messageSendMany({ sends: [{ queueId: fifo.id, messages: [newMessage({ groupId: "g", deduplicationId: "d" })], dedup: { scope: "queue", nowMs: T0, expiresAtMs: T0 + 300_000 } }] }),
      ]);
      expect(raced.status).toBe("fulfilled");
      for (const queueId of [id, fifo.id]) expect(await store.queueStats({ queueId, nowMs: T0, minSentAtMs: 0 })).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    });

    test("messagePurge and messageExpire delete what they should", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: [newMessage({ sentAtMs: T0 - 100 }), newMessage(), newMessage()] });
      expect(await store.messageExpire({ queueId: id, minSentAtMs: T0 - 50, nowMs: T0 })).toEqual({ deleted: 1, jobChanges: [] });
      expect(await store.messagePurge({ queueId: id, nowMs: T0 })).toEqual({ deleted: 2, jobChanges: [] });
      expect(await receive(id, 10)).toEqual([]);
    });

    test("seqs are never reused after deletes", async () => {
      const id = await makeQueue();
      const [a] = await messageSend(store, { queueId: id, messages: [newMessage()] });
      await store.messagePurge({ queueId: id, nowMs: T0 });
      const [b] = await messageSend(store, { queueId: id, messages: [newMessage()] });
      expect(b!.seq).toBeGreaterThan(a!.seq);
    });

    test("concurrent writes all complete and each message is leased once", async () => {
      const id = await makeQueue();
      await Promise.all(Array.from({ length: 50 }, () => messageSend(store, { queueId: id, messages: Array.from({ length: 10 }, () => newMessage()) })));
      const leases = await Promise.all(Array.from({ length: 60 }, () => receive(id, 10)));
      const seqs = leases.flat().map((m) => m.seq);
      expect(seqs).toHaveLength(500);
      expect(new Set(seqs).size).toBe(500);
    });

    test("acknowledged writes survive close and reopen", async () => {
      const id = await makeQueue();
      await messageSend(store, { queueId: id, messages: [newMessage({ body: "durable" })] });
      store = await handle.reopen();
      const q = (await store.queueGet({ name: "q" }))!;
      const got = await receive(q.id, 10);
      expect(got.map((m) => m.body)).toEqual(["durable"]);
    });

    test("secretGetOrCreate stores the first candidate and returns it from then on, across reopen", async () => {
      const [first, racing] = await Promise.all([
        store.secretGetOrCreate({ name: "receipt-handles", candidate: "first-value" }),
        store.secretGetOrCreate({ name: "receipt-handles", candidate: "racing-value" }),
      ]);
      expect([first, racing]).toEqual(["first-value", "first-value"]);
      expect(await store.secretGetOrCreate({ name: "other", candidate: "other-value" })).toBe("other-value");
      store = await handle.reopen();
      expect(await store.secretGetOrCreate({ name: "receipt-handles", candidate: "after-reopen" })).toBe("first-value");
      expect(await store.secretGetOrCreate({ name: "other", candidate: "after-reopen" })).toBe("other-value");
    });

    // FIFO, fair queues, dedup, dead-lettering and move tasks: cases in their own files.
    const context: ConformanceContext = { store: () => store, reopen: async () => (store = await handle.reopen()), another: () => handle.another(), test };
    registerGroupCases(context);
    registerMoveTaskCases(context);
    registerTwoHandleCases(context);
    registerDepthCases(context);
    registerBacklogCases(context);
    registerJobCases(context);
    registerAdminCases(context);
    registerEventLogCases(context);
    registerOutputCases(context);
    registerJobFlowCases(context);
    registerRequirementCases(context);
    registerWorkerCases(context);
    registerScheduleCases(context);
    registerBatchCases(context);
    registerBlobCases(context);
    registerAccountCases(context);
  });
}
