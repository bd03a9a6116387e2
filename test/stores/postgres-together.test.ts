/**
 * Plain sends that arrive together, for several queues, are written by one statement (one
 * transaction: their rows share an xmin), each answered with its own messages' seqs; a send into a
 * queue deleted meanwhile fails alone. Deletes by message that arrive together are one statement
 * too, each answered for its own entries.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { newMessage } from "../../src/stores/testkit/conformance.js";
import { usePostgresDatabase } from "../support/postgres.js";

const database = usePostgresDatabase();
let store: PostgresStore | undefined;
afterAll(async () => {
  await store?.close();
});

const T0 = 1_700_000_000_000;

async function rows(): Promise<Array<{ seq: number; queue_id: number; body: string; xmin: string }>> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query("SELECT seq::int, queue_id::int, body, xmin::text FROM messages")).rows;
  } finally {
    await client.end();
  }
}

describe("PostgreSQL store: plain sends of one turn", () => {
  it("are one INSERT for every queue, each send answered with its own seqs; one into a deleted queue fails alone", async () => {
    store = await openPostgresStore({ url: database.url, poolSize: 4 });
    const s = store;
    const queue = async (name: string) => (await s.queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 })).queue;
    const [one, two, doomed] = [await queue("one"), await queue("two"), await queue("doomed")];
    const sendsFor = (round: number) =>
      Array.from({ length: 10 }, (_, i) => ({ queueId: (i % 2 === 0 ? one : two).id, bodies: [0, 1, 2].map((k) => `r${round}-s${i}-m${k}`) }));

    // Together, all fine: one statement.
    const first = sendsFor(1);
    const answered = await Promise.all(first.map((x) => s.messageSend({ queueId: x.queueId, messages: x.bodies.map((body) => newMessage({ body })) })));
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
    const settled = await Promise.allSettled([
      ...second.map((x) => s.messageSend({ queueId: x.queueId, messages: x.bodies.map((body) => newMessage({ body })) })),
      s.messageSend({ queueId: doomed.id, messages: [newMessage({ body: "into the void" })] }),
    ]);
    expect(settled.at(-1)).toMatchObject({ status: "rejected", reason: { code: "QueueNotFound" } });
    const all = new Map((await rows()).map((r) => [r.seq, r]));
    second.forEach((x, i) => {
      const result = settled[i]!;
      expect(result.status).toBe("fulfilled");
      const sent = (result as PromiseFulfilledResult<Array<{ seq: number }>>).value;
      expect(sent.map((m) => all.get(m.seq)?.body)).toEqual(x.bodies);
    });
    expect([...all.values()].some((r) => r.body === "into the void")).toBe(false);
  });

  it("deletes by message of one turn: each answered for its own entries, a message listed twice counted once, other queues untouched", async () => {
    const s = store!;
    const queue = async (name: string) => (await s.queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 })).queue;
    const [left, right] = [await queue("left"), await queue("right")];
    const [l1, l2, l3, l4] = (await s.messageSend({ queueId: left.id, messages: [1, 2, 3, 4].map((n) => newMessage({ body: `l${n}` })) })).map((m) => m.seq);
    const [r1] = (await s.messageSend({ queueId: right.id, messages: [newMessage({ body: "r1" })] })).map((m) => m.seq);
    const del = (queueId: number, seqs: number[]) => s.messageDelete({ queueId, receipts: seqs.map((seq) => ({ seq, token: "any" })), anyReceipt: true });
    const [a, b, c, d] = await Promise.all([del(left.id, [l1!, l2!]), del(left.id, [l2!, l3!]), del(right.id, [l4!]), del(right.id, [r1!])]);
    expect([a.deleted, b.deleted, c.deleted, d.deleted]).toEqual([[true, true], [false, true], [false], [true]]);
    const bodies = (await rows()).map((r) => r.body);
    expect(bodies.filter((b) => /^[lr]\d$/.test(b))).toEqual(["l4"]);
  });
});
