/**
 * The ready queries must read one index range per priority that ends at the first message not
 * yet visible: with `visible_at_ms <= now` alone SQLite walked every in-flight message of the
 * queue on each receive that found fewer messages than it asked for (ready-order.ts). Checked on
 * the plans of the exact SQL the store runs, on a real database.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { limits } from "../../src/core/limits.js";
import { nextReadyInGroupQuery, readyUngroupedQuery } from "../../src/stores/sqlite/ready-order.js";
import { type SqliteStore, openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { newMessage } from "../../src/stores/testkit/conformance.js";
import { messageReceive, messageSend } from "../../src/stores/testkit/one-call.js";

describe("ready queries", () => {
  let dir: string | undefined;
  let store: SqliteStore | undefined;
  afterEach(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function open(): SqliteStore {
    dir = mkdtempSync(join(tmpdir(), "sluice-ready-"));
    store = openSqliteStore({ filename: join(dir, "sluice.db") });
    return store;
  }

  it("search their index by queue, priority and visibility time, with no sort step", () => {
    const db = open().db;
    const plans = [
      db.prepare(`EXPLAIN QUERY PLAN ${readyUngroupedQuery("*")}`).all(1, 1_000, 0, 10),
      db.prepare(`EXPLAIN QUERY PLAN ${nextReadyInGroupQuery("*")}`).all(1, "g", 1_000, 0),
    ].map((rows) => (rows as Array<{ detail: string }>).map((r) => r.detail).join(" | "));
    expect(plans[0]).toContain("USING INDEX messages_ready_ungrouped (queue_id=? AND priority=? AND visible_at_ms<?)");
    expect(plans[1]).toContain("USING INDEX messages_group_ready (queue_id=? AND group_id=? AND priority=? AND visible_at_ms<?)");
    for (const plan of plans) expect(plan).not.toContain("TEMP B-TREE");
  });

  it("find ready messages of every priority, highest first, behind messages in flight", async () => {
    const s = open();
    const { queue } = await s.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 1 });
    const inFlight = Array.from({ length: 50 }, (_, i) => newMessage({ body: `in-flight-${i}`, priority: i % 10, sentAtMs: 1, visibleAtMs: 1 }));
    await messageSend(s, { queueId: queue.id, messages: inFlight });
    const leased = await messageReceive(s, { queueId: queue.id, max: 50, nowMs: 10, visibleUntilMs: 1_000_000, minSentAtMs: 0, receiptToken: "t1" });
    expect(leased.messages).toHaveLength(50);
    const ready = [limits.priorityMin, 5, limits.priorityMax].map((priority) => newMessage({ body: `ready-${priority}`, priority, sentAtMs: 20, visibleAtMs: 20 }));
    await messageSend(s, { queueId: queue.id, messages: ready });
    const got = await messageReceive(s, { queueId: queue.id, max: 10, nowMs: 30, visibleUntilMs: 1_000_000, minSentAtMs: 0, receiptToken: "t2" });
    expect(got.messages.map((m) => m.body)).toEqual([`ready-${limits.priorityMax}`, "ready-5", `ready-${limits.priorityMin}`]);
  });

  it("refuses to store a priority no receive would find", async () => {
    const s = open();
    const { queue } = await s.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 1 });
    await expect(messageSend(s, { queueId: queue.id, messages: [newMessage({ priority: limits.priorityMax + 1 })] })).rejects.toThrow(/priority/);
    expect((await messageReceive(s, { queueId: queue.id, max: 10, nowMs: 1e13, visibleUntilMs: 1e13 + 1, minSentAtMs: 0, receiptToken: "t" })).messages).toEqual([]);
  });
});
