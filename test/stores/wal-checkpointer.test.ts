/**
 * The SQLite store checkpoints its WAL on a worker thread (wal-checkpointer.ts), not inside the
 * COMMITs: once the WAL is past its limit a pass copies it, one more runs with the writes held,
 * and the next write starts the WAL over; nothing committed is lost. The
 * checks are called directly (no waiting on the timer); real SQLite file, real thread.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { newMessage } from "../../src/stores/testkit/conformance.js";
import { messageSend } from "../../src/stores/testkit/one-call.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

describe("the SQLite WAL checkpointed on a worker thread", () => {
  it("copies what was committed, starts the WAL over past its limit, and keeps every message", async () => {
    const file = join(await makeTempDir("sluice-wal-checkpoint-"), "sluice.db");
    const restartFrames = 40;
    const store = openSqliteStore({ filename: file, pipelinedSync: true, walCheckMs: 0, checkpointThread: { everyMs: 0, restartFrames } });
    let sent = 0;
    try {
      const checkpointer = store.checkpointer!;
      const { queue } = await store.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 1_000 });
      const send = async (n: number): Promise<void> => {
        await messageSend(store, { queueId: queue.id, messages: Array.from({ length: n }, () => newMessage({ body: "x".repeat(4096), sentAtMs: 1_000, visibleAtMs: 1_000 })) });
        sent += n;
      };
      const pass = async (): Promise<void> => {
        checkpointer.check();
        await checkpointer.idle();
      };

      // Frames in the WAL, as another connection's checkpoint reports them.
      const walFrames = (): number => {
        const other = new Database(file);
        try {
          return (other.pragma("wal_checkpoint(PASSIVE)") as Array<{ log: number }>)[0]!.log;
        } finally {
          other.close();
        }
      };
      // The migrations' frames are past the limit: a pass, one more with the writes held, and the
      // next write starts the WAL over.
      await pass();
      expect([checkpointer.passes, checkpointer.restarts, checkpointer.lastError]).toEqual([2, 1, undefined]);
      expect(checkpointer.lastLog!).toBeGreaterThanOrEqual(restartFrames);
      await send(2);
      expect(walFrames()).toBeLessThan(restartFrames);
      // Below the limit: no pass, however many commits.
      await pass();
      for (let i = 0; i < 20; i++) await send(4);
      expect(checkpointer.passes).toBe(2);
      expect(walFrames()).toBeGreaterThanOrEqual(restartFrames);
      await pass();
      expect([checkpointer.passes, checkpointer.restarts]).toEqual([4, 2]);
      await send(1);
      expect(walFrames()).toBeLessThan(restartFrames);
      expect((await store.queueHeld({ queueId: queue.id })).messages).toBe(sent);
    } finally {
      await store.close();
    }
    const reopened = openSqliteStore({ filename: file });
    try {
      const { queue } = await reopened.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 2_000 });
      expect((await reopened.queueHeld({ queueId: queue.id })).messages).toBe(sent);
    } finally {
      await reopened.close();
    }
  });

  it("is off where SQLite's own checkpoints are asked for, and for an in-memory database", async () => {
    const file = join(await makeTempDir("sluice-wal-checkpoint-"), "sluice.db");
    const own = openSqliteStore({ filename: file, pipelinedSync: true, checkpointThread: false });
    const memory = openSqliteStore({ filename: ":memory:", pipelinedSync: false });
    try {
      expect(own.checkpointer).toBeUndefined();
      expect(memory.checkpointer).toBeUndefined();
    } finally {
      await own.close();
      await memory.close();
    }
  });
});
