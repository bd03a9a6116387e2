/**
 * What only the PostgreSQL store has to prove: migrations applied once by nodes starting together,
 * a database newer than the code refused, clear failures when the database is unreachable (at
 * start, and while running — then recovery without a restart), and correctness with several
 * store handles (what several nodes are) working one database at once.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { ReceiptCodec, loadReceiptSecret } from "../../src/core/receipt.js";
import { Db } from "../../src/stores/postgres/db.js";
import { SchemaTooNewError, readMigrations } from "../../src/stores/postgres/migrate.js";
import { DatabaseUnreachableError, openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { newMessage } from "../../src/stores/testkit/conformance.js";
import { jobCaseKit } from "../../src/stores/testkit/conformance-jobs-kit.js";
import { type PostgresCluster, pauseCluster, resumeCluster, startCluster, stopCluster } from "../support/postgres-cluster.js";
import { createDatabase } from "../support/postgres.js";
import { messageDelete, messageReceive, messageSend } from "../../src/stores/testkit/one-call.js";

const opened: PostgresStore[] = [];
const drops: Array<() => Promise<void>> = [];

afterAll(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close().catch(() => undefined)));
  for (const drop of drops.splice(0)) await drop();
});

async function freshDatabase(): Promise<string> {
  const db = await createDatabase();
  drops.push(db.drop);
  return db.url;
}

async function open(url: string, poolSize = 4): Promise<PostgresStore> {
  const store = await openPostgresStore({ url, poolSize });
  opened.push(store);
  return store;
}

async function sql<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe("PostgreSQL store: migrations", () => {
  it("nodes starting at once apply each migration once", async () => {
    const url = await freshDatabase();
    await Promise.all(Array.from({ length: 5 }, () => open(url, 2)));
    const applied = await sql<{ version: number; n: number }>(url, "SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version");
    expect(applied.map((r) => r.version)).toEqual(readMigrations().map((m) => m.version));
    expect(applied.every((r) => r.n === 1)).toBe(true);
  });

  it("nodes starting at once agree on one receipt secret, and a handle one signs the others accept", async () => {
    const url = await freshDatabase();
    const nodes = await Promise.all(Array.from({ length: 4 }, () => open(url, 2)));
    const secrets = await Promise.all(nodes.map((node) => loadReceiptSecret(node)));
    expect(new Set(secrets.map((s) => s.toString("base64url"))).size).toBe(1);
    const handle = new ReceiptCodec(secrets[0]!).encode({ queueId: 1, seq: 7, token: "tokentoken12" });
    expect(new ReceiptCodec(secrets[3]!).decode(handle).seq).toBe(7);
    const reopened = await open(url, 2);
    expect((await loadReceiptSecret(reopened)).equals(secrets[0]!)).toBe(true);
  });

  it("refuses a database whose schema is newer than the code, saying what to do", async () => {
    const url = await freshDatabase();
    await (await open(url, 2)).close();
    await sql(url, "INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (9999, '9999_future.sql', 0)");
    const refused = openPostgresStore({ url, poolSize: 2 });
    await expect(refused).rejects.toBeInstanceOf(SchemaTooNewError);
    await expect(refused).rejects.toThrow(/version 9999, newer than this Sluice knows.*Run that version \(or newer\) on every node/);
  });
});

describe("PostgreSQL store: an unreachable database", () => {
  it("at start: retries with backoff, then fails with the address and the reason", async () => {
    const retries: number[] = [];
    const started = Date.now();
    const failed = openPostgresStore({ url: "postgres://sluice@127.0.0.1:1/nothing", poolSize: 2, connectTimeoutMs: 1_500, onRetry: (_n, _err, delayMs) => retries.push(delayMs) });
    await expect(failed).rejects.toBeInstanceOf(DatabaseUnreachableError);
    await expect(failed).rejects.toThrow(/Cannot reach PostgreSQL at postgres:\/\/sluice@127\.0\.0\.1:1\/nothing \(gave up after \d+ attempts\): .*ECONNREFUSED/);
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(retries[1]).toBeGreaterThan(retries[0]!);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("a wrong database name fails at once with PostgreSQL's reason (nothing to wait for)", async () => {
    const { url } = await createDatabase().then((db) => (drops.push(db.drop), db));
    const wrong = url.replace(/\/[^/]+$/, "/no_such_database");
    await expect(openPostgresStore({ url: wrong, poolSize: 2, connectTimeoutMs: 60_000 })).rejects.toThrow(/refused the connection: database "no_such_database" does not exist/);
  });

  describe("while running (a cluster of its own, stopped and started again)", () => {
    let cluster: PostgresCluster;
    afterAll(async () => {
      if (cluster) await stopCluster(cluster.dir);
    });

    it("calls fail with ServiceUnavailable while the database is down, and work again once it is back", async () => {
      cluster = await startCluster(await mkdtemp(join(tmpdir(), "sluice-pg-outage-")));
      const store = await open(cluster.adminUrl, 3);
      const { queue } = await store.queueCreate({ name: "outage", config: defaultQueueConfig(false), tags: {}, nowMs: 1 });
      await messageSend(store, { queueId: queue.id, messages: [newMessage({ body: "before" })] });

      await pauseCluster(cluster);
      await expect(messageSend(store, { queueId: queue.id, messages: [newMessage({ body: "during" })] })).rejects.toMatchObject({ code: "ServiceUnavailable" });
      await expect(store.queueGet({ name: "outage" })).rejects.toMatchObject({ code: "ServiceUnavailable", message: expect.stringMatching(/database is unreachable/) });

      await resumeCluster(cluster);
      await messageSend(store, { queueId: queue.id, messages: [newMessage({ body: "after" })] });
      const { messages } = await messageReceive(store, { queueId: queue.id, max: 10, nowMs: 2_000_000_000_000, visibleUntilMs: 2_000_000_030_000, minSentAtMs: 0, receiptToken: "tok-outage" });
      expect(messages.map((m) => m.body).sort()).toEqual(["after", "before"]);
    });
  });
});

describe("PostgreSQL store: receives that dead-letter", () => {
  const T0 = 1_700_000_000_000;

  // A receive reads ready rows again after moving some: a move written only at its end let it find
  // (and move) the same row forever.
  it.each([false, true])("a receive of one that moves a message on goes on to the next one (fifo: %s)", async (fifo) => {
    const store = await open(await freshDatabase());
    const { queue: dlq } = await store.queueCreate({ name: fifo ? "dlq.fifo" : "dlq", config: defaultQueueConfig(fifo), tags: {}, nowMs: T0 });
    const { queue } = await store.queueCreate({ name: fifo ? "src.fifo" : "src", config: defaultQueueConfig(fifo), tags: {}, nowMs: T0 });
    const groupId = fifo ? "g" : undefined;
    await messageSend(store, { queueId: queue.id, messages: [newMessage({ body: "poison", groupId }), newMessage({ body: "next", groupId })] });
    const receive = (token: string) =>
      messageReceive(store, { queueId: queue.id, max: 1, nowMs: T0, visibleUntilMs: T0, minSentAtMs: 0, receiptToken: token, fifo, deadLetter: { queueId: dlq.id, maxReceiveCount: 1, sourceQueueName: queue.name } });
    expect((await receive("tok-1")).messages.map((m) => m.body)).toEqual(["poison"]);
    const second = await receive("tok-2");
    expect(second.deadLetteredCount).toBe(1);
    expect(second.messages.map((m) => m.body)).toEqual(["next"]);
    const moved = await messageReceive(store, { queueId: dlq.id, max: 10, nowMs: T0, visibleUntilMs: T0 + 1, minSentAtMs: 0, receiptToken: "tok-3", fifo });
    expect(moved.messages.map((m) => m.body)).toEqual(["poison"]);
  });
});

describe("PostgreSQL store: a lease that fails after its acks", () => {
  // The contract (core/job-store.ts, jobLease): the acks stand and the call rejects with the
  // lease's error. Here the database refuses the lease: a cap past PostgreSQL's integer.
  it("rejects with the lease's error, and the acks stand", async () => {
    const store = await open(await freshDatabase());
    const kit = jobCaseKit(() => store);
    const q = await kit.makeQueue("tenanted");
    await kit.submit(q, { tenant: "acme" });
    const acks = await kit.reportFor(q);
    await kit.submit(q, { tenant: "acme" });
    const failed = await store.jobLease({ ...kit.leaseParams(q, `${q.id}.tok-bbbbbbbb`), max: 1, acks, limits: { maxRunningPerTenant: 3_000_000_000 } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((failed as { code?: string } | undefined)?.code).toBe("22003"); // numeric_value_out_of_range
    expect(await store.jobGet({ id: acks[0]!.id })).toMatchObject({ status: "succeeded", outputJson: '"ok"' });
  });
});

describe("PostgreSQL store: prepared statements", () => {
  const statement = { name: "sluice_test_statement", text: "SELECT $1::int + 1 AS n" };
  const preparedNames = async (db: Db): Promise<string[]> => (await db.query<{ name: string }>("SELECT name FROM pg_prepared_statements")).rows.map((r) => r.name);

  it("a named statement is prepared once per connection, in and out of transactions; not when the Db is told not to", async () => {
    const url = await freshDatabase();
    for (const prepare of [true, false]) {
      // One connection: what pg_prepared_statements shows is that connection's.
      const db = new Db({ url, poolSize: 1, prepare });
      try {
        expect((await db.query<{ n: number }>(statement, [1])).rows).toEqual([{ n: 2 }]);
        expect(await db.transaction(async (tx) => (await tx.query<{ n: number }>(statement, [2])).rows)).toEqual([{ n: 3 }]);
        expect(await preparedNames(db)).toEqual(prepare ? [statement.name] : []);
      } finally {
        await db.close();
      }
    }
  });

  it("a node whose requests go through a transaction-mode pool (a separate listening URL) prepares nothing", async () => {
    const url = await freshDatabase();
    const direct = await open(url);
    const pooled = await openPostgresStore({ url, listenUrl: url, poolSize: 2 });
    opened.push(pooled);
    expect(direct.db.options.prepare).toBe(true);
    expect(pooled.db.options.prepare).toBe(false);
  });
});

describe("PostgreSQL store: an empty long-poll receive", () => {
  const T0 = 1_700_000_000_000;

  // Core skips its messageNextVisibleAt when the receive answers it: a wrong answer would hold a
  // long poll past a delay's end, or end it at nothing.
  it("tells, in its own answer, when a message becomes visible before the poll ends", async () => {
    const store = await open(await freshDatabase());
    const { queue } = await store.queueCreate({ name: "later", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    await messageSend(store, { queueId: queue.id, messages: [newMessage({ body: "in 1.5 s", sentAtMs: T0, visibleAtMs: T0 + 1_500 }), newMessage({ body: "in 9 s", sentAtMs: T0, visibleAtMs: T0 + 9_000 })] });
    const receive = (waitUntilMs: number | undefined) => messageReceive(store, { queueId: queue.id, max: 10, nowMs: T0, visibleUntilMs: T0 + 30_000, minSentAtMs: 0, receiptToken: "tok", waitUntilMs });
    expect(await receive(T0 + 2_000)).toEqual({ messages: [], deadLetteredCount: 0, nextVisible: { atMs: T0 + 1_500 } });
    expect(await receive(T0 + 1_500)).toEqual({ messages: [], deadLetteredCount: 0, nextVisible: { atMs: T0 + 1_500 } });
    expect(await receive(T0 + 1_000)).toEqual({ messages: [], deadLetteredCount: 0, nextVisible: { atMs: undefined } });
    expect((await receive(undefined)).nextVisible).toBeUndefined();
    // A receive that got messages says nothing of later ones.
    const got = await messageReceive(store, { queueId: queue.id, max: 10, nowMs: T0 + 1_500, visibleUntilMs: T0 + 31_500, minSentAtMs: 0, receiptToken: "tok-2", waitUntilMs: T0 + 20_000 });
    expect(got.messages.map((m) => m.body)).toEqual(["in 1.5 s"]);
    expect(got.nextVisible).toBeUndefined();
    expect((await receive(T0 + 20_000)).nextVisible).toEqual({ atMs: T0 + 9_000 });
  });

  it("on a queue with message groups, leaves the question to core (the receive takes its other path)", async () => {
    const store = await open(await freshDatabase());
    const { queue } = await store.queueCreate({ name: "fair", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    await messageSend(store, { queueId: queue.id, messages: [newMessage({ body: "grouped", groupId: "g", sentAtMs: T0, visibleAtMs: T0 + 1_500 })] });
    const empty = await messageReceive(store, { queueId: queue.id, max: 10, nowMs: T0, visibleUntilMs: T0 + 30_000, minSentAtMs: 0, receiptToken: "tok", waitUntilMs: T0 + 2_000 });
    expect(empty).toEqual({ messages: [], deadLetteredCount: 0 });
    expect(await store.messageNextVisibleAt({ queueId: queue.id, nowMs: T0 })).toBe(T0 + 1_500);
  });
});

describe("PostgreSQL store: several nodes on one database", () => {
  const T0 = 1_700_000_000_000;

  it("FIFO: no two nodes ever hold messages of one group at once, and each group is delivered in order, once", async () => {
    const url = await freshDatabase();
    const nodes = await Promise.all([open(url, 4), open(url, 4), open(url, 4)]);
    const { queue } = await nodes[0]!.queueCreate({ name: "race.fifo", config: defaultQueueConfig(true), tags: {}, nowMs: T0 });
    const groups = 12;
    const perGroup = 30;
    for (let g = 0; g < groups; g++) {
      const messages = Array.from({ length: perGroup }, (_, i) => newMessage({ groupId: `g${g}`, body: `g${g}:${i}`, deduplicationId: `g${g}-${i}` }));
      for (let i = 0; i < perGroup; i += 10) {
        await messageSend(nodes[g % 3]!, { queueId: queue.id, messages: messages.slice(i, i + 10), dedup: { scope: "queue", nowMs: T0, expiresAtMs: T0 + 300_000 } });
      }
    }
    // A delivery is wrong if it hands out a message while the group's previous one is still in
    // flight: i.e. it came back before the delete of that previous message was even sent.
    const deleteSentAt = new Map<string, number>();
    const deliveries: Array<{ body: string; at: number }> = [];
    let clock = 0;
    const tick = (): number => ++clock;
    const worker = async (node: PostgresStore, w: number): Promise<void> => {
      for (let idle = 0; idle < 20; ) {
        const { messages } = await messageReceive(node, { queueId: queue.id, max: 1 + (w % 4), nowMs: T0 + 1, visibleUntilMs: T0 + 3_600_000, minSentAtMs: 0, receiptToken: `tok-${w}-${tick()}`, fifo: true });
        const at = tick();
        if (messages.length === 0) {
          idle++;
          await new Promise((r) => setTimeout(r, 2));
          continue;
        }
        idle = 0;
        for (const m of messages) deliveries.push({ body: m.body, at });
        // Hold the messages a moment, as a consumer would: the window a broken lock shows in.
        await new Promise((r) => setTimeout(r, 1));
        for (const m of messages) deleteSentAt.set(m.body, tick());
        const { deleted } = await messageDelete(node, { queueId: queue.id, receipts: messages.map((m) => ({ seq: m.seq, token: m.receiptToken! })), nowMs: T0 + 1 });
        expect(deleted.every(Boolean)).toBe(true);
      }
    };
    await Promise.all(Array.from({ length: 9 }, (_, w) => worker(nodes[w % 3]!, w)));
    expect(deliveries).toHaveLength(groups * perGroup);
    expect(new Set(deliveries.map((d) => d.body)).size).toBe(groups * perGroup);
    for (let g = 0; g < groups; g++) {
      const ofGroup = deliveries.filter((d) => d.body.startsWith(`g${g}:`));
      expect(ofGroup.map((d) => d.body)).toEqual(Array.from({ length: perGroup }, (_, i) => `g${g}:${i}`));
      for (let i = 1; i < perGroup; i++) {
        const previousDeleteSent = deleteSentAt.get(`g${g}:${i - 1}`)!;
        // Same receive (same tick) is allowed: one receive may take a leading run of a group.
        if (ofGroup[i]!.at !== ofGroup[i - 1]!.at) expect(ofGroup[i]!.at, `g${g}:${i} delivered while g${g}:${i - 1} was in flight`).toBeGreaterThan(previousDeleteSent);
      }
    }
  });

  it("FIFO: a group another node is receiving from (its row locked) is passed by, not waited for", async () => {
    const url = await freshDatabase();
    const store = await open(url, 4);
    const { queue } = await store.queueCreate({ name: "held.fifo", config: defaultQueueConfig(true), tags: {}, nowMs: T0 });
    await messageSend(store, { queueId: queue.id, messages: [newMessage({ groupId: "held", body: "h1" }), newMessage({ groupId: "free", body: "f1" })] });
    // Another node, mid-receive: it holds the group's row until its transaction ends.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT 1 FROM message_groups WHERE queue_id = $1 AND group_id = 'held' FOR UPDATE", [queue.id]);
      const during = await messageReceive(store, { queueId: queue.id, max: 10, nowMs: T0, visibleUntilMs: T0 + 30_000, minSentAtMs: 0, receiptToken: "tok-during", fifo: true });
      expect(during.messages.map((m) => m.body)).toEqual(["f1"]);
      await other.query("COMMIT");
    } finally {
      await other.end();
    }
    const after = await messageReceive(store, { queueId: queue.id, max: 10, nowMs: T0, visibleUntilMs: T0 + 30_000, minSentAtMs: 0, receiptToken: "tok-after", fifo: true });
    expect(after.messages.map((m) => m.body)).toEqual(["h1"]);
  });

  it("dedup: one deduplication id sent through several nodes at once is enqueued once", async () => {
    const url = await freshDatabase();
    const nodes = await Promise.all([open(url, 4), open(url, 4), open(url, 4)]);
    const { queue } = await nodes[0]!.queueCreate({ name: "dedup.fifo", config: defaultQueueConfig(true), tags: {}, nowMs: T0 });
    for (let round = 0; round < 20; round++) {
      const sent = await Promise.all(
        nodes.flatMap((node, n) =>
          [0, 1].map((k) => messageSend(node, { queueId: queue.id, messages: [newMessage({ groupId: "g", deduplicationId: `id-${round}`, body: `${round}-${n}-${k}` })], dedup: { scope: "queue", nowMs: T0, expiresAtMs: T0 + 300_000 } })),
        ),
      );
      const originals = sent.flat().filter((s) => !s.duplicate);
      expect(originals).toHaveLength(1);
      expect(new Set(sent.flat().map((s) => s.seq))).toEqual(new Set([originals[0]!.seq]));
    }
    expect(await nodes[1]!.queueStats({ queueId: queue.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 20 });
  });

  it("jobs: one Idempotency-Key submitted through several nodes at once creates one job", async () => {
    const url = await freshDatabase();
    const nodes = await Promise.all([open(url, 4), open(url, 4)]);
    const { queue } = await nodes[0]!.queueCreate({ name: "jobs", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => {
          const id = `job-${round}-${i}`;
          const job = { id, queueId: queue.id, queueName: "jobs", status: "queued" as const, inputJson: "{}", attempt: 0, maxAttempts: 3, priority: 0, createdAtMs: T0, updatedAtMs: T0, idempotencyKey: `key-${round}`, cancelRequested: false, availableAtMs: T0 };
          const item = { job, message: newMessage({ messageId: id, body: "{}" }), idempotency: { key: `key-${round}`, fingerprint: "f", expiresAtMs: T0 + 86_400_000 } };
          return nodes[i % 2]!.jobCreateMany({ items: [item], nowMs: T0 }).then((r) => r.results[0]!);
        }),
      );
      const created = results.filter((r) => r.created);
      expect(created).toHaveLength(1);
      expect(new Set(results.map((r) => r.job.id))).toEqual(new Set([created[0]!.job.id]));
    }
    expect((await nodes[1]!.jobCountByStatus({ queueId: queue.id })).queued).toBe(10);
  });
});
