/**
 * Job rows are read as arrays in jobSelectColumns order and written by position (job-rows.ts), so
 * the column lists must match the table exactly: a column added by a migration but missing here
 * would be silently dropped on every write. Checked against the real schema.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jobColumns, jobSelectColumns, mutableJobColumns } from "../../src/stores/sqlite/job-rows.js";
import { type SqliteStore, openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";

describe("job row columns", () => {
  let dir: string | undefined;
  let store: SqliteStore | undefined;
  afterEach(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("name every column of the jobs table, seq first, each once", () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-jobrows-"));
    store = openSqliteStore({ filename: join(dir, "s.db") });
    const tableColumns = store.db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('jobs') ORDER BY cid").all().map((r) => r.name);
    expect([...jobSelectColumns].sort()).toEqual([...tableColumns].sort());
    expect(new Set(jobSelectColumns).size).toBe(jobSelectColumns.length);
    expect(jobSelectColumns[0]).toBe("seq");
    expect(jobColumns).not.toContain("seq");
    for (const c of mutableJobColumns) expect(jobColumns).toContain(c);
  });
});
