/**
 * Conformance cases with two handles on one database — what two nodes sharing a store are: what
 * is written through one is read, received, deduplicated and ordered through the other, and
 * core's long polls and held waits on one wake for writes made through the other (the notifier).
 * The services here run on a manual clock that never moves: only a notice can wake them (a
 * broken notifier fails these cases by the test's timeout).
 */
import { expect } from "vitest";
import { ManualClock } from "../../core/clock.js";
import type { IdSource } from "../../core/ids.js";
import { JobService } from "../../core/jobs/job-service.js";
import { defaultQueueConfig } from "../../core/queue.js";
import { QueueService } from "../../core/queue-service.js";
import type { Store } from "../../core/store.js";
import { type ConformanceContext, T0, newMessage, act } from "./conformance-context.js";
import { jobCaseKit } from "./conformance-jobs-kit.js";
import { messageDelete, messageReceive, messageSend } from "./one-call.js";

/** Ids unique to one node (`node` 1–9), so two services never make the same message id. */
function nodeIds(node: number): IdSource {
  let n = 0;
  return {
    messageId: () => `00000000-0000-4000-800${node}-${String(++n).padStart(12, "0")}`,
    receiptToken: () => `node${node}tok${String(++n).padStart(8, "0")}`,
  };
}

interface Node {
  queues: QueueService;
  jobs: JobService;
  close(): void;
}

function nodeOn(store: Store, clock: ManualClock, node: number): Node {
  const ids = nodeIds(node);
  const queues = new QueueService({ store, clock, ids, senderId: "000000000000" });
  const jobs = new JobService({ store, queues, clock, ids, senderId: "000000000000", random: () => 0.5 });
  return {
    queues,
    jobs,
    close() {
      jobs.close();
      queues.waiters.closeAll();
      queues.close();
    },
  };
}

/** Resolves once `condition` holds, looking again each turn (the test's own timeout bounds it). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

export function registerTwoHandleCases({ store, another, test }: ConformanceContext): void {
  async function receive(s: Store, queueId: number, token: string, nowMs = T0, fifo = false) {
    return (await messageReceive(s, { queueId, max: 10, nowMs, visibleUntilMs: nowMs + 30_000, minSentAtMs: 0, receiptToken: token, fifo })).messages;
  }

  test("two handles: a message sent through one is received through the other, and its delete there is seen by the first", async () => {
    const a = store();
    const b = await another();
    const { queue } = await a.queueCreate({ name: "shared", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    expect((await b.queueGet({ name: "shared" }))?.id).toBe(queue.id);
    await messageSend(a, { queueId: queue.id, messages: [newMessage({ body: "hello" })] });
    const got = await receive(b, queue.id, "tok-bbbbbbbb");
    expect(got.map((m) => m.body)).toEqual(["hello"]);
    // In flight for one handle is in flight for the other.
    expect(await receive(a, queue.id, "tok-aaaaaaaa")).toEqual([]);
    const { deleted } = await messageDelete(b, { queueId: queue.id, receipts: [{ seq: got[0]!.seq, token: "tok-bbbbbbbb" }] });
    expect(deleted).toEqual([true]);
    expect(await a.queueStats({ queueId: queue.id, nowMs: T0 + 60_000, minSentAtMs: 0 })).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(await receive(a, queue.id, "tok-cccccccc", T0 + 60_000)).toEqual([]);
  });

  test("two handles: a queue deleted through one is gone for the other, and a send there is refused", async () => {
    const a = store();
    const b = await another();
    const { queue } = await a.queueCreate({ name: "doomed", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    expect(await b.queueGet({ name: "doomed" })).toBeDefined(); // read (and maybe cached) by b first
    await a.queueDelete({ id: queue.id, nowMs: T0 + 1 });
    // As core does after a queue write. A handle may keep a queue's record until it hears of the
    // change (as SQS, whose deletes take a while to reach every server): the notice drops it.
    a.notifier.publish({ kind: "queueChanged", queueId: queue.id, queueName: "doomed", deleted: { liveJobIds: [] } });
    while ((await b.queueGet({ name: "doomed" })) !== undefined) await new Promise((resolve) => setImmediate(resolve));
    expect(await b.queueDeletedAt({ name: "doomed" })).toBe(T0 + 1);
    expect(await b.messageSendMany({ sends: [{ queueId: queue.id, messages: [newMessage()] }] })).toEqual(["queueGone"]);
  });

  test("two handles: FIFO deduplication and group order hold across both", async () => {
    const a = store();
    const b = await another();
    const { queue } = await a.queueCreate({ name: "orders.fifo", config: defaultQueueConfig(true), tags: {}, nowMs: T0 });
    const dedup = { scope: "queue" as const, nowMs: T0, expiresAtMs: T0 + 300_000 };
    const [first] = await messageSend(a, { queueId: queue.id, dedup, messages: [newMessage({ body: "1", groupId: "g", deduplicationId: "d1" })] });
    const [again] = await messageSend(b, { queueId: queue.id, dedup: { ...dedup, nowMs: T0 + 1 }, messages: [newMessage({ body: "1 again", groupId: "g", deduplicationId: "d1" })] });
    expect(again).toMatchObject({ duplicate: true, seq: first!.seq, messageId: first!.messageId });
    await messageSend(b, { queueId: queue.id, dedup: { ...dedup, nowMs: T0 + 2 }, messages: [newMessage({ body: "2", groupId: "g", deduplicationId: "d2" })] });
    await messageSend(a, { queueId: queue.id, dedup: { ...dedup, nowMs: T0 + 3 }, messages: [newMessage({ body: "3", groupId: "g", deduplicationId: "d3" })] });
    const r1 = await messageReceive(b, { queueId: queue.id, max: 1, nowMs: T0 + 4, visibleUntilMs: T0 + 30_000, minSentAtMs: 0, receiptToken: "tok-b1bbbbbb", fifo: true });
    expect(r1.messages.map((m) => m.body)).toEqual(["1"]);
    // The group is blocked for the other handle while its head is in flight.
    expect(await receive(a, queue.id, "tok-a1aaaaaa", T0 + 5, true)).toEqual([]);
    await messageDelete(b, { queueId: queue.id, receipts: [{ seq: r1.messages[0]!.seq, token: "tok-b1bbbbbb" }] });
    expect((await receive(a, queue.id, "tok-a2aaaaaa", T0 + 6, true)).map((m) => m.body)).toEqual(["2", "3"]);
  });

  test("two handles: a job submitted through one is leased through the other, and its completion is read back through the first", async () => {
    const a = store();
    const b = await another();
    const kitA = jobCaseKit(() => a);
    const kitB = jobCaseKit(() => b);
    const q = await kitA.makeQueue("shared-jobs");
    const { job } = await kitA.submit(q);
    const token = `${q.id}.tok-bbbbbbbb`;
    expect((await kitB.lease(q, { token })).leased.map((j) => j.id)).toEqual([job.id]);
    await act(b, { kind: "complete", id: job.id, leaseToken: token, nowMs: T0 + 1, outputJson: '"done"', resultTtlSeconds: 60 });
    expect(await a.jobGet({ id: job.id })).toMatchObject({ status: "succeeded", outputJson: '"done"' });
  });

  test("two handles: a long poll waiting on one is woken by a send on the other, through the notifier", async () => {
    const clock = new ManualClock(T0);
    const one = nodeOn(store(), clock, 1);
    const two = nodeOn(await another(), clock, 2);
    try {
      const { queue } = await one.queues.createQueue("", { name: "polled" });
      const polling = one.queues.receiveMessages(queue, { waitTimeSeconds: 20 });
      await until(() => one.queues.waiters.waiterCount(queue.id) === 1);
      await two.queues.sendMessage(await two.queues.getQueue("", "polled"), { body: "wake up" });
      // The clock never moves: only the notice of the send can wake the poll.
      expect((await polling).map((m) => m.body)).toEqual(["wake up"]);
    } finally {
      one.close();
      two.close();
    }
  });

  test("two handles: a held wait and a lease on one end when the other submits and completes", async () => {
    const clock = new ManualClock(T0);
    const one = nodeOn(store(), clock, 1);
    const two = nodeOn(await another(), clock, 2);
    try {
      const leasing = one.jobs.lease("", "work", { waitSeconds: 20 });
      await until(() => one.queues.waiters.waiterCount() === 1);
      const { job } = await two.jobs.submit("", "work", { input: { n: 1 } });
      const [leased] = await leasing;
      expect(leased?.id).toBe(job.id);
      const waiting = one.jobs.wait("", job.id, 30);
      await until(() => one.jobs.events.listenerCount() === 1);
      await two.jobs.complete("", job.id, { leaseId: leased!.leaseToken, output: { ok: true } });
      expect(await waiting).toMatchObject({ id: job.id, status: "succeeded", outputJson: '{"ok":true}' });
    } finally {
      one.close();
      two.close();
    }
  });
}
