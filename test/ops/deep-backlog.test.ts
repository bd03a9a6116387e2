/**
 * A retention pass over a deep backlog is cut into bounded store writes with a turn of the event
 * loop between them: counted in rows per store call and in slices, on an injected clock (no
 * timing). The counts read after the pass are the kept ones, exact.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { NewMessage } from "../../src/core/message.js";
import { QueueService } from "../../src/core/queue-service.js";
import { cryptoIdSource } from "../../src/server/ids.js";
import { startMaintenance } from "../../src/server/maintenance.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { messageSend } from "../../src/stores/testkit/one-call.js";

afterEach(removeTempDirs);

const backlog = 20_000;
const slice = 250;

function message(i: number, sentAtMs: number): NewMessage {
  return {
    messageId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    body: "x".repeat(64),
    attributes: {},
    systemAttributes: {},
    bodyMd5: "00000000000000000000000000000000",
    sentAtMs,
    visibleAtMs: sentAtMs,
    priority: 0,
    senderId: "000000000000",
  };
}

describe("retention over a deep backlog", () => {
  it("deletes in slices of at most the slice size, yielding between them, and leaves exact counts", async () => {
    const clock = new ManualClock();
    const store = openSqliteStore({ filename: join(await makeTempDir("sluice-deep-"), "sluice.db") });
    const queues = new QueueService({ store, clock, ids: cryptoIdSource(), senderId: "000000000000" });
    const { queue } = await queues.createQueue("", { name: "deep", config: { messageRetentionPeriodSeconds: 60 } });
    const t0 = clock.nowMs();
    for (let i = 0; i < backlog; i += 1_000) {
      await messageSend(store, { queueId: queue.id, messages: Array.from({ length: 1_000 }, (_, k) => message(i + k, t0)) });
    }
    clock.advance(30_000);
    await queues.sendMessages(queue, [{ body: "young" }]);
    clock.advance(31_000);

    const expire = vi.spyOn(store, "messageExpire");
    let turns = 0;
    const maintenance = startMaintenance({ queues, clock, intervalMs: 3_600_000, sliceMessages: slice, between: async () => void turns++, onError: (e) => expect.fail(String(e)) });
    await maintenance.runOnce();
    await maintenance.stop();

    const deletedPerCall = await Promise.all(expire.mock.results.map(async (r) => ((await r.value) as { deleted: number }).deleted));
    expect(expire.mock.calls.every(([p]) => p.limit === slice)).toBe(true);
    expect(Math.max(...deletedPerCall)).toBe(slice);
    expect(deletedPerCall.reduce((a, b) => a + b, 0)).toBe(backlog);
    // Every full slice is followed by a turn; the last call finds fewer than a slice and ends the pass.
    expect(deletedPerCall).toHaveLength(backlog / slice + 1);
    expect(turns).toBe(backlog / slice);
    expect(await queues.queueStats(queue)).toMatchObject({ visible: 1, inFlight: 0, delayed: 0 });
    await store.close();
  });

  it("stops between slices when upkeep stops", async () => {
    const clock = new ManualClock();
    const store = openSqliteStore({ filename: join(await makeTempDir("sluice-deep-"), "sluice.db") });
    const queues = new QueueService({ store, clock, ids: cryptoIdSource(), senderId: "000000000000" });
    const { queue } = await queues.createQueue("", { name: "deep", config: { messageRetentionPeriodSeconds: 60 } });
    await messageSend(store, { queueId: queue.id, messages: Array.from({ length: 1_000 }, (_, k) => message(k, clock.nowMs())) });
    clock.advance(61_000);
    const expire = vi.spyOn(store, "messageExpire");
    let stopping: Promise<void> | undefined;
    const maintenance = startMaintenance({
      queues,
      clock,
      intervalMs: 3_600_000,
      sliceMessages: 100,
      // Upkeep is told to stop during the third turn: the pass ends there.
      between: async () => {
        if (expire.mock.calls.length === 3) stopping = maintenance.stop();
      },
      onError: (e) => expect.fail(String(e)),
    });
    await maintenance.runOnce();
    await stopping;
    expect(expire).toHaveBeenCalledTimes(3);
    expect(await queues.queueStats(queue)).toMatchObject({ visible: 0 });
    expect((await store.messagePeek({ queueId: queue.id, minSentAtMs: 0, limit: 1_000 })).length).toBe(700);
    await store.close();
  });
});
