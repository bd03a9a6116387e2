/**
 * Queue records on PostgreSQL nodes: core keeps them between requests (the store keeps none),
 * drops them on queueChanged notices from any node, and trusts none while notices could be
 * missed (its listening connection lost).
 */
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { QueueService } from "../../src/core/queue-service.js";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { counterIds } from "../core/service-harness.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { waitFor } from "../support/wait.js";

const database = usePostgresDatabase();
const opened: Array<{ store: PostgresStore; queues: QueueService }> = [];
afterAll(async () => {
  for (const { queues } of opened) queues.close();
  await Promise.all(opened.splice(0).map(({ store }) => store.close()));
});

/** A node: its own store handle (and listening connection) and its own queue service. */
async function node(): Promise<{ store: PostgresStore; queues: QueueService }> {
  const store = await openPostgresStore({ url: database.url, poolSize: 2 });
  const queues = new QueueService({ store, clock: new ManualClock(), ids: counterIds(), senderId: "000000000000" });
  opened.push({ store, queues });
  return { store, queues };
}

describe("queue records kept in core on PostgreSQL nodes", () => {
  it("a node reads a queue once, then keeps it until another node's change is told of, then reads the new one", async () => {
    const [a, b] = [await node(), await node()];
    await a.queues.createQueue("", { name: "kept" });
    const reads = vi.spyOn(b.store, "queueGet");
    expect((await b.queues.getQueue("", "kept")).config.visibilityTimeoutSeconds).toBe(30);
    expect((await b.queues.getQueue("", "kept")).config.visibilityTimeoutSeconds).toBe(30);
    expect(reads).toHaveBeenCalledTimes(1);
    await a.queues.updateQueueConfig("", "kept", { visibilityTimeoutSeconds: 45 });
    // Core published the change after its write: it reaches b over LISTEN/NOTIFY.
    await waitFor(async () => (await b.queues.getQueue("", "kept")).config.visibilityTimeoutSeconds === 45, { what: "b to read the changed queue" });
  });

  it("a queue deleted on one node is gone on the other once told, and a send into it meanwhile is refused", async () => {
    const [a, b] = [await node(), await node()];
    const { queue } = await a.queues.createQueue("", { name: "doomed" });
    await b.queues.getQueue("", "doomed");
    await a.queues.deleteQueue("", "doomed");
    // Refused by the store's write whether or not b has heard yet (nothing is written).
    await expect(b.queues.sendMessages(queue, [{ body: "late" }])).rejects.toMatchObject({ code: "QueueNotFound" });
    await expect(b.queues.getQueue("", "doomed")).rejects.toMatchObject({ code: "QueueNotFound" });
  });

  it("records kept before the listening connection was lost are not trusted: a change made meanwhile is read", async () => {
    const [a, b] = [await node(), await node()];
    const { queue } = await a.queues.createQueue("", { name: "unheard" });
    expect((await b.queues.getQueue("", "unheard")).config.delaySeconds).toBe(0);
    const epoch = b.store.notifier.epoch;
    expect(epoch).toBeDefined();
    // Every listening connection cut by the server (a and b's): notices from now on may be missed.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'");
    } finally {
      await admin.end();
    }
    await waitFor(() => b.store.notifier.epoch !== epoch, { what: "b to notice its listening connection is gone" });
    // Changed with no notice at all: b must read it, not answer from before the loss.
    await a.store.queueUpdate({ id: queue.id, config: { ...queue.config, delaySeconds: 5 }, nowMs: Date.now() });
    expect((await b.queues.getQueue("", "unheard")).config.delaySeconds).toBe(5);
  });
});
