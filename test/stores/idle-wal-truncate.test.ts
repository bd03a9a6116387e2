/**
 * The SQLite store gives the WAL's disk back when writes are few (idle-wal-truncate.ts): a check
 * that finds few commits since the one before empties the WAL file, one that finds a loaded
 * server's worth leaves it, and nothing committed is lost. The checks are called directly (no
 * waiting on the timer); real SQLite file.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { quietGroups } from "../../src/stores/sqlite/idle-wal-truncate.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { newMessage } from "../../src/stores/testkit/conformance.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { messageSend } from "../../src/stores/testkit/one-call.js";

afterAll(removeTempDirs);

describe("the SQLite WAL when writes are few", () => {
  it("is emptied at a quiet check, left at a busy one, and keeps every message", async () => {
    const file = join(await makeTempDir("sluice-idle-wal-"), "sluice.db");
    const store = openSqliteStore({ filename: file, pipelinedSync: true, walCheckMs: 0 });
    try {
      const walBytes = (): number => statSync(`${file}-wal`).size;
      const { queue } = await store.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 1_000 });
      const send = (n: number): Promise<unknown> => messageSend(store, { queueId: queue.id, messages: Array.from({ length: n }, () => newMessage({ body: "x".repeat(1024), sentAtMs: 1_000, visibleAtMs: 1_000 })) });
      const truncate = store.walTruncate!;
      await send(100);
      expect(walBytes()).toBeGreaterThan(0);
      // A few commits since the last check: quiet, the WAL is emptied; then nothing to do.
      expect(truncate.check()).toBe(true);
      expect(walBytes()).toBe(0);
      expect(truncate.check()).toBe(false);

      // As many commits as a loaded server makes in an interval: the WAL is left as it is.
      for (let i = 0; i < quietGroups; i++) await send(1);
      expect(truncate.check()).toBe(false);
      expect(walBytes()).toBeGreaterThan(0);
      // The next interval is quiet again.
      expect(truncate.check()).toBe(true);
      expect(walBytes()).toBe(0);
      expect((await store.queueHeld({ queueId: queue.id })).messages).toBe(100 + quietGroups);
    } finally {
      await store.close();
    }
    const reopened = openSqliteStore({ filename: file });
    try {
      const { queue } = await reopened.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 2_000 });
      expect((await reopened.queueHeld({ queueId: queue.id })).messages).toBe(100 + quietGroups);
    } finally {
      await reopened.close();
    }
  });
});
