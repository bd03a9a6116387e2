/**
 * Batches in core on a real SQLite store and a manual clock: the completion window's end (expired,
 * with what finished kept), a cancel before validation ran, a step that fails leaving the others
 * be, and how an input file is split into lines.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BatchService, FileService, batchJobsOf, type BatchRecord } from "../../src/core/index.js";
import { ManualClock } from "../../src/core/clock.js";
import { jsonlLines } from "../../src/core/batches/jsonl-lines.js";
import { JobService } from "../../src/core/jobs/job-service.js";
import { QueueService } from "../../src/core/queue-service.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { counterIds } from "./service-harness.js";

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function harness() {
  const dir = mkdtempSync(join(tmpdir(), "sluice-batches-"));
  const store = openSqliteStore({ filename: join(dir, "sluice.db") });
  const clock = new ManualClock();
  const ids = counterIds();
  const queues = new QueueService({ store, clock, ids, senderId: "000000000000" });
  const jobs = new JobService({ store, queues, clock, ids, senderId: "000000000000" });
  const files = new FileService({ store, clock, ids });
  const failures: string[] = [];
  // A queue whose jobs can't be made (as if deleted between read and write): its batch's step fails.
  const real = batchJobsOf(jobs);
  const batchJobs = { ...real, keyedItems: (p: Parameters<typeof real.keyedItems>[0]) => (p.queueName === "broken" ? Promise.reject(new Error("queue broken")) : real.keyedItems(p)) };
  const batches = new BatchService({ store, files, jobs: batchJobs, clock, ids, onAdvanceError: (err, b) => failures.push(`${b.id}: ${String(err)}`) });
  closers.push(async () => {
    jobs.close();
    queues.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const upload = (text: string) => files.upload("", { filename: "in.jsonl", purposeOf: () => "batch", bytes: (async function* () { yield new TextEncoder().encode(text); })() });
  const lines = (...ids: string[]) => `${ids.map((id) => JSON.stringify({ custom_id: id, method: "POST", url: "/v1/embeddings", body: {} })).join("\n")}\n`;
  const create = async (text: string, queue: string): Promise<BatchRecord> => batches.create("", { input_file_id: (await upload(text)).id, endpoint: "/v1/embeddings", completion_window: "24h", metadata: { queue } });
  return { store, clock, jobs, files, batches, failures, create, lines };
}

describe("batches in core", () => {
  it("ends expired when its window closes: finished jobs keep their results, live ones are canceled", async () => {
    const h = harness();
    const batch = await h.create(h.lines("a", "b"), "slow");
    await h.batches.advanceAll();
    expect((await h.batches.get("", batch.id)).status).toBe("in_progress");
    const [leased] = await h.jobs.lease("", "slow", { max: 1 });
    await h.jobs.complete("", leased!.id, { leaseId: leased!.leaseToken, output: { v: 1 } });
    h.clock.advance(86_400_000);
    await h.batches.advanceAll();
    const ended = await h.batches.get("", batch.id);
    expect([ended.status, ended.counts, ended.expiredAtMs]).toEqual(["expired", { total: 2, completed: 1, failed: 1 }, h.clock.nowMs()]);
    const errors = new TextDecoder().decode((await h.store.fileChunkRead({ fileId: ended.errorFileId!, fromIndex: 0, limit: 1 }))[0]);
    expect(JSON.parse(errors)).toMatchObject({ custom_id: "b", response: null, error: { code: "batch_expired" } });
    expect((await h.jobs.list("", "slow", {})).jobs.map((j) => j.status).sort()).toEqual(["canceled", "succeeded"]);
  });

  it("ended before every line was a job: the lines never submitted are in the error file too", async () => {
    const h = harness();
    const batch = await h.create(h.lines("a", "b", "c"), "partial");
    // As a node leaves it once validated, before its first slice of jobs.
    const midway: BatchRecord = { ...batch, version: 2, status: "in_progress", validated: true, submittedLines: 0, counts: { total: 3, completed: 0, failed: 0 } };
    await h.store.batchWrite({ batch: midway, expectedVersion: 1 });
    await h.batches.cancel("", batch.id);
    await h.batches.advanceAll();
    const ended = await h.batches.get("", batch.id);
    expect([ended.status, ended.counts]).toEqual(["cancelled", { total: 3, completed: 0, failed: 3 }]);
    const errors = new TextDecoder().decode((await h.store.fileChunkRead({ fileId: ended.errorFileId!, fromIndex: 0, limit: 1 }))[0]);
    expect(errors.trim().split("\n").map((l) => [(JSON.parse(l) as { custom_id: string }).custom_id, (JSON.parse(l) as { error: { code: string } }).error.code])).toEqual([
      ["a", "batch_cancelled"],
      ["b", "batch_cancelled"],
      ["c", "batch_cancelled"],
    ]);
  });

  it("cancelled before validation ran makes no job and names no file", async () => {
    const h = harness();
    const batch = await h.create(h.lines("a"), "never");
    expect((await h.batches.cancel("", batch.id)).status).toBe("cancelling");
    await h.batches.advanceAll();
    const ended = await h.batches.get("", batch.id);
    expect([ended.status, ended.outputFileId, ended.errorFileId, ended.counts.total]).toEqual(["cancelled", undefined, undefined, 0]);
    await expect(h.jobs.list("", "never", {})).rejects.toMatchObject({ code: "QueueNotFound" });
  });

  it("a batch whose step fails is reported and tried again; the others go on", async () => {
    const h = harness();
    const bad = await h.create(h.lines("a"), "broken");
    const good = await h.create(h.lines("b"), "fine");
    await h.batches.advanceAll();
    expect(h.failures).toEqual([`${bad.id}: Error: queue broken`]);
    const stuck = await h.batches.get("", bad.id);
    expect([stuck.status, stuck.submitted, stuck.submittedLines]).toEqual(["in_progress", undefined, 0]);
    expect((await h.jobs.list("", "fine", {})).jobs.map((j) => (JSON.parse(j.inputJson) as { custom_id: string }).custom_id)).toEqual(["b"]);
    expect((await h.batches.get("", good.id)).submitted).toBe(true);
    await h.batches.advanceAll();
    expect(h.failures).toHaveLength(2);
  });

  it("splits lines on \\n across chunks, drops a \\r before it, counts a last line without one, flags one too long", async () => {
    async function* chunks(...parts: string[]) {
      for (const p of parts) yield new TextEncoder().encode(p);
    }
    const got = [];
    for await (const l of jsonlLines(chunks('{"a":', "1}\r\n\n", "xyz", "\n", "0123456789abc\n", "tail"), 10)) got.push(l);
    expect(got).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, text: "" },
      { line: 3, text: "xyz" },
      { line: 4, tooLong: true },
      { line: 5, text: "tail" },
    ]);
  });
});
