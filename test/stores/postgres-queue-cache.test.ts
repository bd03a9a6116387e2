/**
 * The PostgreSQL store keeps queue records between requests, dropped by queueChanged notices from
 * any node, and trusts none while notices could be missed (its listening connection lost).
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { waitFor } from "../support/wait.js";

const database = usePostgresDatabase();
const opened: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function open(): Promise<PostgresStore> {
  const store = await openPostgresStore({ url: database.url, poolSize: 2 });
  opened.push(store);
  return store;
}

const T0 = 1_700_000_000_000;

describe("PostgreSQL store: queue records kept between requests", () => {
  it("a node keeps a queue's record until another node's change is told of, then reads the new one", async () => {
    const [a, b] = [await open(), await open()];
    const { queue } = await a.queueCreate({ name: "kept", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    expect((await b.queueGet({ name: "kept" }))?.config.visibilityTimeoutSeconds).toBe(30);
    await a.queueUpdate({ id: queue.id, config: { ...queue.config, visibilityTimeoutSeconds: 45 }, nowMs: T0 + 1 });
    // Not told yet: b answers from what it kept (no read of the queue).
    expect((await b.queueGet({ name: "kept" }))?.config.visibilityTimeoutSeconds).toBe(30);
    // As core does after every queue write: the notice reaches b over LISTEN/NOTIFY.
    a.notifier.publish({ kind: "queueChanged", queueId: queue.id, queueName: "kept" });
    await waitFor(async () => (await b.queueGet({ name: "kept" }))?.config.visibilityTimeoutSeconds === 45, { what: "b to read the changed queue" });
  });

  it("records kept before the listening connection was lost are not trusted: a change made meanwhile is read", async () => {
    const [a, b] = [await open(), await open()];
    const { queue } = await a.queueCreate({ name: "unheard", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    expect((await b.queueGet({ name: "unheard" }))?.config.delaySeconds).toBe(0);
    const epoch = b.notifier.listenEpoch;
    expect(epoch).toBeDefined();
    // Every listening connection cut by the server (a and b's): notices from now on may be missed.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'");
    } finally {
      await admin.end();
    }
    await waitFor(() => b.notifier.listenEpoch !== epoch, { what: "b to notice its listening connection is gone" });
    // Changed with no notice at all: b must read it, not answer from before the loss.
    await a.queueUpdate({ id: queue.id, config: { ...queue.config, delaySeconds: 5 }, nowMs: T0 + 1 });
    expect((await b.queueGet({ name: "unheard" }))?.config.delaySeconds).toBe(5);
  });
});
