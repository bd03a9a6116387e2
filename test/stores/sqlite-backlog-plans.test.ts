/**
 * What keeps a deep backlog from stalling SQLite's event loop: each retention slice and each count
 * is an index search bounded by what it deletes or counts — never a scan of the queue's messages.
 * Checked on the plans SQLite makes for the statements the store runs (queue-counts.ts).
 */
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { queueCountsSql } from "../../src/stores/sqlite/queue-counts.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

afterAll(removeTempDirs);

describe("SQLite plans for a deep backlog", async () => {
  const store = openSqliteStore({ filename: join(await makeTempDir("sluice-plans-"), "sluice.db") });
  afterAll(() => store.close());
  const plan = (sql: string, params: unknown[]): string[] =>
    store.db
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all(...params)
      .map((r) => (r as { detail: string }).detail);

  const cases: Array<[keyof typeof queueCountsSql, unknown[], string]> = [
    ["total", [1], "SEARCH queue_message_counts USING INTEGER PRIMARY KEY (rowid=?)"],
    ["hidden", [1, 0, 0], "SEARCH messages USING INDEX messages_visible (queue_id=? AND visible_at_ms>?)"],
    ["expired", [1, 0], "SEARCH messages USING COVERING INDEX messages_sent (queue_id=? AND sent_at_ms<?)"],
    ["oldestSent", [1, 0, 0], "SEARCH messages USING INDEX messages_sent (queue_id=? AND sent_at_ms>?)"],
    ["head", [1, 0, 0], "SEARCH messages USING INDEX messages_visible (queue_id=? AND visible_at_ms<?)"],
    ["expireSlice", [1, 0, 10], "SEARCH messages USING COVERING INDEX messages_sent (queue_id=? AND sent_at_ms<?)"],
  ];
  for (const [name, params, search] of cases) {
    it(`${name}: an index search, no scan`, () => {
      const steps = plan(queueCountsSql[name], params);
      expect(steps).toContain(search);
      expect(steps.filter((s) => /^SCAN /.test(s) || /USE TEMP B-TREE/.test(s))).toEqual([]);
    });
  }

  it("expireSlice deletes by primary key what the search found", () => {
    expect(plan(queueCountsSql.expireSlice, [1, 0, 10])).toContain("SEARCH messages USING INTEGER PRIMARY KEY (rowid=?)");
  });
});
