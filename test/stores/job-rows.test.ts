/**
 * Job rows are read packed (jobSelectSql: one JSON array and the input and output) and written by
 * position (job-rows.ts), so
 * the column lists must match the table exactly: a column added by a migration but missing here
 * would be silently dropped on every write. Checked against the real schema.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { newJobRecord } from "../../src/core/job.js";
import { jobColumns, mutableJobColumns, toJob } from "../../src/stores/codecs/job-row.js";
import { jobChangeOf, jobInsertValues, jobRowOf, jobSelectColumns, jobSelectSql, jobUpdateSql, packedJobColumns } from "../../src/stores/sqlite/job-rows.js";
import type { JobRecord } from "../../src/core/job.js";
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

  it("a submitted job's record has every field a read one has, in the same order (one shape for every JobRecord)", () => {
    // A missing optional field would be added later by a transition's spread — on Node 20 that
    // makes records outlive young-generation GCs (newJobRecord) — and two orders are two shapes.
    const read = toJob(jobRowOf([JSON.stringify(packedJobColumns.map((c) => (c === "status" ? "queued" : c === "cancel_requested" ? 0 : null))), null, null]));
    const submitted = newJobRecord({ id: "j", queueId: 1, queueName: "q", status: "queued", inputJson: "1", attempt: 0, maxAttempts: 3, priority: 0, createdAtMs: 1, updatedAtMs: 1, cancelRequested: false }, 7, 9);
    expect(Object.keys(submitted)).toEqual(Object.keys(read));
    expect(submitted).toMatchObject({ id: "j", seq: 7, messageSeq: 9, inputJson: "1", outputJson: undefined, leaseToken: undefined });
  });

  it("a transition writes only the columns it changed, and the row then reads as the new record", () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-jobrows-"));
    store = openSqliteStore({ filename: join(dir, "s.db") });
    const db = store.db;
    const queueId = Number(db.prepare("INSERT INTO queues (name, config, tags, created_at_ms, updated_at_ms) VALUES ('q', '{}', '{}', 1, 1)").run().lastInsertRowid);
    const before = newJobRecord({ id: "j", queueId, queueName: "q", status: "queued", inputJson: "1", attempt: 0, maxAttempts: 3, priority: 0, createdAtMs: 1, updatedAtMs: 1, cancelRequested: false, availableAtMs: 1 }, 0, 5);
    before.seq = Number(db.prepare(`INSERT INTO jobs (${jobColumns.join(", ")}) VALUES (${jobColumns.map(() => "?").join(", ")})`).run(jobInsertValues(before)).lastInsertRowid);
    const read = (): JobRecord => toJob(jobRowOf(db.prepare(`SELECT ${jobSelectSql} FROM jobs WHERE id = 'j'`).raw().get() as unknown[]));
    expect(jobChangeOf(before, { ...before })).toEqual({ mask: 0, values: ["j"] });
    // Every mutable field, changed one at a time and then all at once.
    const changes: Array<Partial<JobRecord>> = [
      { status: "running" },
      { outputJson: '{"a":1}' },
      { error: { message: "m", type: "T" } },
      { attempt: 2 },
      { progress: 1 / 3 },
      { startedAtMs: 2 },
      { finishedAtMs: 3 },
      { updatedAtMs: 4 },
      { cancelRequested: true },
      { leaseToken: "tok" },
      { leaseSeconds: 30 },
      { leaseExpiresAtMs: 5 },
      { deadlineAtMs: 6 },
      { availableAtMs: undefined },
      { expiresAtMs: 7 },
      { messageSeq: undefined },
      { outputAttachmentsJson: '{"a":{"blobId":"b","size":1,"contentType":"t","sha256":"s"}}' },
    ];
    expect(changes).toHaveLength(mutableJobColumns.length);
    let current = read();
    changes.forEach((change, i) => {
      const after = { ...current, ...change };
      const { mask, values } = jobChangeOf(current, after);
      expect(mask).toBe(1 << i);
      expect(jobUpdateSql(mask)).toBe(`UPDATE jobs SET ${mutableJobColumns[i]} = ? WHERE id = ?`);
      db.prepare(jobUpdateSql(mask)).run(values);
      current = read();
      expect(current).toEqual({ ...after, seq: before.seq });
    });
    const all = { ...before, seq: current.seq };
    const { mask, values } = jobChangeOf(current, all);
    expect(mask).toBe((1 << mutableJobColumns.length) - 1);
    db.prepare(jobUpdateSql(mask)).run(values);
    expect(read()).toEqual(all);
  });

  it("reads back every value as written: text that needs escaping, fractions, large numbers", () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-jobrows-"));
    store = openSqliteStore({ filename: join(dir, "s.db") });
    const db = store.db;
    const queueId = Number(db.prepare("INSERT INTO queues (name, config, tags, created_at_ms, updated_at_ms) VALUES ('q', '{}', '{}', 1, 1)").run().lastInsertRowid);
    const job = newJobRecord(
      {
        id: "j",
        queueId,
        queueName: "q",
        status: "failed",
        inputJson: '{"say":"\\"hi\\"\\n"}',
        outputJson: '["é",1e300]',
        error: { message: 'line\nbreak "quoted" \\ é 😀 \u2028', type: "T" },
        attempt: 2,
        maxAttempts: 3,
        priority: -7,
        progress: 0.1 + 0.2,
        createdAtMs: 1_767_225_600_123,
        updatedAtMs: Number.MAX_SAFE_INTEGER,
        cancelRequested: true,
        metadataJson: '{"k":"v \\" \\\\ \\u0001"}',
        tenant: "ten ant 😀",
        idempotencyKey: "k\tey",
        trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "a=1,b=2" },
        webhook: { url: "https://example.com/h?a=1&b=2", events: ["job.succeeded"] },
      },
      0,
      5,
    );
    job.seq = Number(db.prepare(`INSERT INTO jobs (${jobColumns.join(", ")}) VALUES (${jobColumns.map(() => "?").join(", ")})`).run(jobInsertValues(job)).lastInsertRowid);
    const read = toJob(jobRowOf(db.prepare(`SELECT ${jobSelectSql} FROM jobs WHERE id = 'j'`).raw().get() as unknown[]));
    expect(read).toEqual(job);
  });
});
