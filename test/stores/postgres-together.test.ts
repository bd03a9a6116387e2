/**
 * The plain sends of one messageSendMany, for several queues, are written by one statement (one
 * transaction: their rows share an xmin), each answered with its own messages' seqs; a send into a
 * queue deleted meanwhile fails alone. The deletes of one messageDeleteMany are one statement too,
 * each answered for its own entries. The plain receives of one queue in one messageReceiveMany are
 * one statement that hands the ready messages out in order, each under its own receipt and visibility.
 */
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { QueueService } from "../../src/core/queue-service.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { newMessage } from "../../src/stores/testkit/conformance.js";
import { messageSend } from "../../src/stores/testkit/one-call.js";
import { counterIds } from "../core/service-harness.js";
import { usePostgresDatabase } from "../support/postgres.js";

const database = usePostgresDatabase();
let store: PostgresStore | undefined;
afterAll(async () => {
  await store?.close();
});

const T0 = 1_700_000_000_000;

interface Row {
  seq: number;
  queue_id: number;
  body: string;
  xmin: string;
  receipt_token: string | null;
  visible_at_ms: string;
  received_at_ms: string | null;
  receive_count: number;
}

async function rows(): Promise<Row[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query("SELECT seq::int, queue_id::int, body, xmin::text, receipt_token, visible_at_ms::text, received_at_ms::text, receive_count FROM messages")).rows;
  } finally {
    await client.end();
  }
}

describe("PostgreSQL store: plain sends of one call", () => {
  it("are one INSERT for every queue, each send answered with its own seqs; one into a deleted queue fails alone", async () => {
    store = await openPostgresStore({ url: database.url, poolSize: 4 });
    const s = store;
    const queue = async (name: string) => (await s.queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 })).queue;
    const [one, two, doomed] = [await queue("one"), await queue("two"), await queue("doomed")];
    const sendsFor = (round: number) =>
      Array.from({ length: 10 }, (_, i) => ({ queueId: (i % 2 === 0 ? one : two).id, bodies: [0, 1, 2].map((k) => `r${round}-s${i}-m${k}`) }));

    // Together, all fine: one statement.
    const first = sendsFor(1);
    const answered = (await s.messageSendMany({ sends: first.map((x) => ({ queueId: x.queueId, messages: x.bodies.map((body) => newMessage({ body })) })) })) as Array<Array<{ seq: number }>>;
    const afterFirst = await rows();
    expect(new Set(afterFirst.map((r) => r.xmin)).size).toBe(1);
    const bySeq = new Map(afterFirst.map((r) => [r.seq, r]));
    answered.forEach((sent, i) => {
      expect(sent.map((m) => bySeq.get(m.seq)?.body)).toEqual(first[i]!.bodies);
      expect(sent.map((m) => bySeq.get(m.seq)?.queue_id)).toEqual([first[i]!.queueId, first[i]!.queueId, first[i]!.queueId]);
      expect(sent.map((m) => m.seq)).toEqual([...sent.map((m) => m.seq)].sort((a, b) => a - b));
    });

    // Together with a send into a queue deleted since its record was read: that one fails alone.
    await s.queueDelete({ id: doomed.id, nowMs: T0 + 1 });
    const second = sendsFor(2);
    const outcomes = await s.messageSendMany({
      sends: [
        ...second.map((x) => ({ queueId: x.queueId, messages: x.bodies.map((body) => newMessage({ body })) })),
        { queueId: doomed.id, messages: [newMessage({ body: "into the void" })] },
      ],
    });
    expect(outcomes.at(-1)).toBe("queueGone");
    const all = new Map((await rows()).map((r) => [r.seq, r]));
    second.forEach((x, i) => {
      const sent = outcomes[i]!;
      if (sent === "queueGone") throw new Error("a send into a live queue failed");
      expect(sent.map((m) => all.get(m.seq)?.body)).toEqual(x.bodies);
    });
    expect([...all.values()].some((r) => r.body === "into the void")).toBe(false);
  });

  it("deletes by message of one call: each answered for its own entries, a message listed twice counted once, other queues untouched", async () => {
    const s = store!;
    const queue = async (name: string) => (await s.queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 })).queue;
    const [left, right] = [await queue("left"), await queue("right")];
    const [l1, l2, l3, l4] = (await messageSend(s, { queueId: left.id, messages: [1, 2, 3, 4].map((n) => newMessage({ body: `l${n}` })) })).map((m) => m.seq);
    const [r1] = (await messageSend(s, { queueId: right.id, messages: [newMessage({ body: "r1" })] })).map((m) => m.seq);
    const del = (queueId: number, seqs: number[]) => ({ queueId, receipts: seqs.map((seq) => ({ seq, token: "any" })), anyReceipt: true });
    const [a, b, c, d] = await s.messageDeleteMany({ deletes: [del(left.id, [l1!, l2!]), del(left.id, [l2!, l3!]), del(right.id, [l4!]), del(right.id, [r1!])] });
    expect([a!.deleted, b!.deleted, c!.deleted, d!.deleted]).toEqual([[true, true], [false, true], [false], [true]]);
    const bodies = (await rows()).map((r) => r.body);
    expect(bodies.filter((b) => /^[lr]\d$/.test(b))).toEqual(["l4"]);
  });
});

describe("PostgreSQL store: plain receives of one call", () => {
  const nowMs = T0 + 1_000;
  const receive = (queueId: number, token: string, max: number, waitUntilMs?: number) => ({ queueId, max, nowMs, visibleUntilMs: nowMs + 30_000 + max, minSentAtMs: 0, receiptToken: token, waitUntilMs });
  const receiveMany = async (s: PostgresStore, receives: Array<ReturnType<typeof receive>>) => s.messageReceiveMany({ receives });

  it("are one statement: ready messages handed out in order, each receive up to its max, under its own receipt", async () => {
    const s = store!;
    const { queue } = await s.queueCreate({ name: "shared", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    // 25 ready messages, three of them of a higher priority (served first), and one delayed past `now`.
    const sent = await messageSend(s, {
      queueId: queue.id,
      messages: Array.from({ length: 25 }, (_, i) => newMessage({ body: `m${i}`, priority: i >= 20 && i < 23 ? 1 : 0 })),
    });
    await messageSend(s, { queueId: queue.id, messages: [newMessage({ body: "later", visibleAtMs: T0 + 5_000 })] });
    const readyOrder = [...sent.slice(20, 23), ...sent.slice(0, 20), ...sent.slice(23)].map((m) => m.seq);

    const [a, b, c, d, e, f] = await receiveMany(s, [
      receive(queue.id, "a", 10),
      receive(queue.id, "b", 10),
      receive(queue.id, "c", 3),
      receive(queue.id, "d", 10, T0 + 20_000),
      receive(queue.id, "e", 5, T0 + 20_000),
      receive(queue.id, "f", 1, T0 + 2_000),
    ]);
    expect([a!, b!, c!, d!].map((r) => r.messages.map((m) => m.seq))).toEqual([readyOrder.slice(0, 10), readyOrder.slice(10, 20), readyOrder.slice(20, 23), readyOrder.slice(23)]);
    expect([a!, b!, c!, d!].map((r) => new Set(r.messages.map((m) => m.receiptToken)))).toEqual([new Set(["a"]), new Set(["b"]), new Set(["c"]), new Set(["d"])]);
    // Empty long polls learn when the next message becomes visible, as far as their own wait goes.
    expect(e).toEqual({ messages: [], deadLetteredCount: 0, nextVisible: { atMs: T0 + 5_000 } });
    expect(f).toEqual({ messages: [], deadLetteredCount: 0, nextVisible: { atMs: undefined } });

    const leased = (await rows()).filter((r) => r.queue_id === queue.id && r.receipt_token !== null);
    const maxOf: Record<string, number> = { a: 10, b: 10, c: 3, d: 10 };
    expect(leased).toHaveLength(25);
    for (const r of leased) {
      expect(r.visible_at_ms).toBe(String(nowMs + 30_000 + maxOf[r.receipt_token!]!));
      expect([r.received_at_ms, r.receive_count]).toEqual([String(nowMs), 1]);
    }
    // One statement leased them all: every leased row version was written by one transaction.
    expect(new Set(leased.map((r) => r.xmin)).size).toBe(1);
  });

  it("two nodes' receives of one call each take disjoint messages; a queue with groups is served by the transaction path", async () => {
    const s = store!;
    const other = await openPostgresStore({ url: database.url, poolSize: 4 });
    try {
      const { queue } = await s.queueCreate({ name: "two-nodes", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
      const sent = await messageSend(s, { queueId: queue.id, messages: Array.from({ length: 50 }, (_, i) => newMessage({ body: `n${i}` })) });
      const results = (
        await Promise.all([receiveMany(s, ["p", "q", "r"].map((t) => receive(queue.id, t, 10))), receiveMany(other, ["x", "y", "z"].map((t) => receive(queue.id, t, 10)))])
      ).flat();
      const seqs = results.flatMap((r) => r.messages.map((m) => m.seq));
      expect(seqs.sort((x, y) => x - y)).toEqual(sent.map((m) => m.seq));
      // 60 wanted, 50 there: each node's statement gets at least 20 (SKIP LOCKED), no receive more than its max.
      for (const r of results) expect(r.messages.length).toBeLessThanOrEqual(10);
      // Each node's three receives: one statement (one transaction) each.
      const leased = (await rows()).filter((r) => r.queue_id === queue.id);
      const writers = (tokens: string[]) => new Set(leased.filter((r) => tokens.includes(r.receipt_token!)).map((r) => r.xmin)).size;
      expect([writers(["p", "q", "r"]), writers(["x", "y", "z"])]).toEqual([1, 1]);

      const { queue: fair } = await s.queueCreate({ name: "grouped", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
      await messageSend(s, { queueId: fair.id, messages: [newMessage({ body: "g1", groupId: "g" }), newMessage({ body: "plain" })] });
      const fairResults = await receiveMany(s, [receive(fair.id, "g-a", 1), receive(fair.id, "g-b", 1), receive(fair.id, "g-c", 1)]);
      expect(fairResults.flatMap((r) => r.messages.map((m) => m.body)).sort()).toEqual(["g1", "plain"]);
    } finally {
      await other.close();
    }
  });
});

describe("PostgreSQL store: core gathers a turn's calls", () => {
  it("hands one turn's plain sends to one messageSendMany and its FIFO sends each alone", async () => {
    const s = store!;
    const queues = new QueueService({ store: s, clock: new ManualClock(T0), ids: counterIds(), senderId: "000000000000" });
    const many = vi.spyOn(s, "messageSendMany");
    try {
      const { queue: plain } = await queues.createQueue("", { name: "gathered" });
      const { queue: fifo } = await queues.createQueue("", { name: "alone.fifo", config: { fifoQueue: true, contentBasedDeduplication: true } });
      many.mockClear();
      await Promise.all([
        ...[1, 2, 3].map((n) => queues.sendMessages(plain, [{ body: `p${n}` }, { body: `p${n}'` }])),
        ...[1, 2].map((n) => queues.sendMessages(fifo, [{ body: `f${n}`, groupId: "g" }])),
      ]);
      expect(many.mock.calls.map(([p]) => p.sends.map((send) => send.messages.length))).toEqual([[1], [1], [2, 2, 2]]);
      const leased = (await rows()).filter((r) => r.queue_id === plain.id);
      expect(new Set(leased.map((r) => r.xmin)).size).toBe(1);
    } finally {
      many.mockRestore();
      queues.close();
    }
  });
});
