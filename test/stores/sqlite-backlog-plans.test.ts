/**
 * What keeps a deep backlog from stalling SQLite's event loop: each retention slice and each count
 * is an index search bounded by what it deletes or counts — never a scan of the queue's messages.
 * Checked on the plans SQLite makes for the statements the store runs (queue-counts.ts), and that
 * a queued message stays out of the send-time index (migration 047) until it is received.
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultQueueConfig } from "../../src/core/queue.js";
import { queueCountsSql, sentBeforeSql } from "../../src/stores/sqlite/queue-counts.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { newMessage } from "../../src/stores/testkit/conformance.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { messageReceive, messageSend } from "../../src/stores/testkit/one-call.js";

afterAll(removeTempDirs);

describe("SQLite plans for a deep backlog", async () => {
  const store = openSqliteStore({ filename: join(await makeTempDir("sluice-plans-"), "sluice.db") });
  afterAll(() => store.close());
  const plan = (sql: string, params: Record<string, number>): string[] =>
    store.db
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all(Object.fromEntries(Object.entries(params).filter(([name]) => sql.includes(`@${name}`))))
      .map((r) => (r as { detail: string }).detail);
  const params = { queueId: 1, now: 0, minSent: 0, before: 0, limit: 10 };
  // A scan of a table or index; SCAN of a subquery's rows or of a constant row reads no table.
  const scans = (steps: string[]): string[] => steps.filter((s) => (/^SCAN /.test(s) && !/^SCAN (\(subquery-\d+\)|CONSTANT ROW)$/.test(s)) || /USE TEMP B-TREE/.test(s));

  const common = "SEARCH messages USING INDEX messages_ready_ungrouped (queue_id=? AND priority=?";
  const classed = "SEARCH messages USING INDEX messages_ready_classed (queue_id=? AND priority=?";
  const other = "SEARCH messages USING INDEX messages_visible_other (queue_id=?";
  const shifted = "SEARCH messages USING INDEX messages_sent_shifted (queue_id=? AND sent_at_ms";
  const cases: Array<[keyof typeof queueCountsSql, string[]]> = [
    ["total", ["SEARCH queue_message_counts USING INTEGER PRIMARY KEY (rowid=?)"]],
    ["hidden", [`${common} AND visible_at_ms>?)`, `${classed} AND visible_at_ms>?)`, `${other} AND visible_at_ms>?)`]],
    ["expired", [`${shifted}<?)`, `${common} AND visible_at_ms<?)`, `${classed} AND visible_at_ms<?)`, `${other} AND visible_at_ms<?)`]],
    [
      "oldestSent",
      [`${shifted}>?)`, `${common} AND visible_at_ms>? AND visible_at_ms<?)`, `${classed} AND visible_at_ms>? AND visible_at_ms<?)`, `${other} AND visible_at_ms>? AND visible_at_ms<?)`],
    ],
    ["headCommon", [`${common} AND visible_at_ms<?)`]],
    ["headClassed", [`${classed} AND visible_at_ms<?)`]],
    ["headOther", [`${other} AND visible_at_ms<?)`]],
    ["expireSlice", [`${shifted}<?)`, `${common} AND visible_at_ms<?)`, `${classed} AND visible_at_ms<?)`, `${other} AND visible_at_ms<?)`]],
  ];
  for (const [name, searches] of cases) {
    it(`${name}: index searches, no scan`, () => {
      const steps = plan(queueCountsSql[name], params);
      for (const search of searches) expect(steps).toContain(search);
      expect(scans(steps)).toEqual([]);
    });
  }

  it("expireSlice deletes by primary key what the searches found", () => {
    expect(plan(queueCountsSql.expireSlice, params)).toContain("SEARCH messages USING INTEGER PRIMARY KEY (rowid=?)");
  });

  it("a retention slice's jobs are found by the same searches, each job by its id", () => {
    const steps = plan(`SELECT id FROM jobs WHERE id IN (${sentBeforeSql("message_id")}) AND status IN ('waiting', 'queued', 'running')`, params);
    expect(steps).toContain("SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 (id=?)");
    expect(steps).toContain(`${shifted}<?)`);
    expect(steps).toContain(`${common} AND visible_at_ms<?)`);
    expect(scans(steps)).toEqual([]);
  });

  it("a message queued as sent is in no send-time index entry; one received is", async () => {
    const { queue } = await store.queueCreate({ name: "plans", config: defaultQueueConfig(false), tags: {}, nowMs: 1_000 });
    await messageSend(store, { queueId: queue.id, messages: [newMessage({ sentAtMs: 1_000, visibleAtMs: 1_000 }), newMessage({ sentAtMs: 1_000, visibleAtMs: 1_000 })] });
    const entries = (): number => store.db.prepare("SELECT count(*) FROM messages INDEXED BY messages_sent_shifted WHERE queue_id = ? AND visible_at_ms <> sent_at_ms").pluck().get(queue.id) as number;
    expect(entries()).toBe(0);
    await messageReceive(store, { queueId: queue.id, max: 1, nowMs: 2_000, visibleUntilMs: 30_000, minSentAtMs: 0, receiptToken: "t" });
    expect(entries()).toBe(1);
  });
});
