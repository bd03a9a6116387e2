/**
 * Conformance cases for files and batches (core/batches/batch-store.ts): file bytes kept in
 * chunks that another handle reads, batch writes compare-and-set on the version, a slice of a
 * batch's jobs and lines one transaction with the batch's write, and the lines joined with their jobs.
 */
import { expect } from "vitest";
import type { BatchRecord, FileRecord } from "../../core/batches/batch.js";
import type { JobCreateItem } from "../../core/job-store.js";
import type { QueueRecord } from "../../core/queue.js";
import type { ConformanceContext } from "./conformance-context.js";
import { T0, act } from "./conformance-context.js";
import { jobCaseKit, newJobFor } from "./conformance-jobs-kit.js";

function file(id: string, overrides: Partial<FileRecord> = {}): FileRecord {
  return { id, filename: "in.jsonl", purpose: "batch", bytes: 0, chunks: 0, lines: 0, createdAtMs: T0, status: "uploading", ...overrides };
}

function batch(id: string, overrides: Partial<BatchRecord> = {}): BatchRecord {
  return {
    id,
    version: 1,
    endpoint: "/v1/chat/completions",
    inputFileId: "file-in",
    completionWindow: "24h",
    queueName: "batch",
    status: "validating",
    submittedLines: 0,
    counts: { total: 0, completed: 0, failed: 0 },
    createdAtMs: T0,
    expiresAtMs: T0 + 86_400_000,
    ...overrides,
  };
}

function lineItem(queue: QueueRecord, batchId: string, line: number): JobCreateItem {
  const key = `${batchId}:${line}`;
  const { job, message } = newJobFor(queue, { idempotencyKey: key });
  return { job, message, idempotency: { key, fingerprint: key, expiresAtMs: T0 + 86_400_000 } };
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const text = (chunks: Uint8Array[]): string => chunks.map((c) => new TextDecoder().decode(c)).join("");

export function registerBatchCases({ store, another, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);

  test("a file's chunks are read back in order, by another handle too, and go with the file", async () => {
    await store().fileCreate({ file: file("file-a") });
    await store().fileChunkWrite({ fileId: "file-a", index: 1, data: bytes("world\n") });
    await store().fileChunkWrite({ fileId: "file-a", index: 0, data: bytes("hello ") });
    await store().fileUpdate({ file: file("file-a", { bytes: 12, chunks: 2, lines: 1, status: "processed" }) });
    const other = await another();
    expect(await other.fileGet({ id: "file-a" })).toEqual(file("file-a", { bytes: 12, chunks: 2, lines: 1, status: "processed" }));
    expect(text(await other.fileChunkRead({ fileId: "file-a", fromIndex: 0, limit: 10 }))).toBe("hello world\n");
    expect(text(await other.fileChunkRead({ fileId: "file-a", fromIndex: 1, limit: 1 }))).toBe("world\n");
    expect(await store().fileGet({ account: "acct-b", id: "file-a" })).toBeUndefined();
    expect(await store().fileDelete({ account: "acct-b", id: "file-a" })).toBe(false);
    expect(await store().fileDelete({ id: "file-a" })).toBe(true);
    expect(await store().fileGet({ id: "file-a" })).toBeUndefined();
    expect(await store().fileChunkRead({ fileId: "file-a", fromIndex: 0, limit: 10 })).toEqual([]);
    expect(await store().fileDelete({ id: "file-a" })).toBe(false);
  });

  test("batchWrite replaces only at the expected version; lists page newest first and active ones oldest first", async () => {
    await store().batchCreate({ batch: batch("batch_1") });
    await store().batchCreate({ batch: batch("batch_2", { account: "acct-b" }) });
    await store().batchCreate({ batch: batch("batch_3") });
    expect(await store().batchWrite({ batch: batch("batch_1", { version: 2, status: "failed" }), expectedVersion: 2 })).toBe(false);
    expect(await store().batchWrite({ batch: batch("batch_1", { version: 2, status: "failed" }), expectedVersion: 1 })).toBe(true);
    expect((await store().batchGet({ id: "batch_1" }))?.status).toBe("failed");
    expect(await store().batchGet({ id: "batch_2" })).toBeUndefined();
    expect((await store().batchGet({ account: "acct-b", id: "batch_2" }))?.account).toBe("acct-b");
    expect((await store().batchList({ limit: 10 })).map((b) => b.id)).toEqual(["batch_3", "batch_1"]);
    expect((await store().batchList({ afterId: "batch_3", limit: 10 })).map((b) => b.id)).toEqual(["batch_1"]);
    expect((await store().batchList({ limit: 1 })).map((b) => b.id)).toEqual(["batch_3"]);
    // Done batches leave the active list; every account's are in it.
    expect((await store().batchListActive({ limit: 10 })).map((b) => b.id)).toEqual(["batch_2", "batch_3"]);
    expect((await store().batchListActive({ afterId: "batch_2", limit: 10 })).map((b) => b.id)).toEqual(["batch_3"]);
  });

  test("batchSubmit writes the batch, its jobs and their lines together, and a lost race writes nothing", async () => {
    const queue = await kit.makeQueue("batch");
    await store().batchCreate({ batch: batch("batch_s") });
    const items = [lineItem(queue, "batch_s", 1), lineItem(queue, "batch_s", 3)];
    const lines = [
      { line: 1, customId: "a" },
      { line: 3, customId: "b" },
    ];
    const lost = await store().batchSubmit({ batch: batch("batch_s", { version: 2, submittedLines: 3 }), expectedVersion: 5, items, lines, nowMs: T0 });
    expect(lost).toEqual({ written: false });
    expect(await store().jobList({ queueId: queue.id, limit: 10 })).toEqual([]);
    const won = await store().batchSubmit({ batch: batch("batch_s", { version: 2, submittedLines: 3 }), expectedVersion: 1, items, lines, nowMs: T0 });
    if (!won.written) throw new Error("batchSubmit refused");
    expect(won.results.map((r) => r.created)).toEqual([true, true]);
    expect((await store().batchGet({ id: "batch_s" }))?.submittedLines).toBe(3);
    const rows = await store().batchJobRows({ batchId: "batch_s", afterLine: 0, limit: 10 });
    expect(rows).toEqual([
      { line: 1, customId: "a", jobId: won.results[0]!.job.id, status: "queued" },
      { line: 3, customId: "b", jobId: won.results[1]!.job.id, status: "queued" },
    ]);
    // A replayed slice (a restart) finds the same jobs by their keys and keeps the lines.
    const again = await store().batchSubmit({ batch: batch("batch_s", { version: 3, submittedLines: 3 }), expectedVersion: 2, items: [lineItem(queue, "batch_s", 1)], lines: [lines[0]!], nowMs: T0 });
    expect(again.written && again.results.map((r) => [r.created, r.job.id])).toEqual([[false, won.results[0]!.job.id]]);
    expect(await store().batchJobCounts({ batchId: "batch_s" })).toEqual({ queued: 2 });
  });

  test("batchJobCounts and batchJobRows follow the jobs to their end, and a job gone counts as missing", async () => {
    const queue = await kit.makeQueue("batch");
    await store().batchCreate({ batch: batch("batch_c") });
    const items = [1, 2, 3].map((line) => lineItem(queue, "batch_c", line));
    const lines = [1, 2, 3].map((line) => ({ line, customId: `c${line}` }));
    const r = await store().batchSubmit({ batch: batch("batch_c", { version: 2, submittedLines: 3 }), expectedVersion: 1, items, lines, nowMs: T0 });
    if (!r.written) throw new Error("batchSubmit refused");
    const leased = await kit.lease(queue, { token: `${queue.id}.tok-bbbbbbbb`, max: 2 });
    const [first, second] = leased.leased.map((j) => j.id);
    await act(store(), { kind: "complete", id: first!, leaseToken: `${queue.id}.tok-bbbbbbbb`, nowMs: T0, outputJson: '{"answer":42}', resultTtlSeconds: 3600 });
    expect(await store().batchJobCounts({ batchId: "batch_c" })).toEqual({ succeeded: 1, running: 1, queued: 1 });
    const live = await store().batchJobRows({ batchId: "batch_c", afterLine: 0, limit: 10, liveOnly: true });
    expect(live.map((row) => row.jobId).sort()).toEqual([second!, r.results.find((x) => x.job.id !== first && x.job.id !== second)!.job.id].sort());
    const done = (await store().batchJobRows({ batchId: "batch_c", afterLine: 0, limit: 10 })).find((row) => row.jobId === first);
    expect(done).toMatchObject({ status: "succeeded", outputJson: '{"answer":42}' });
    await store().queueDelete({ id: queue.id, nowMs: T0 });
    expect(await store().batchJobCounts({ batchId: "batch_c" })).toEqual({ missing: 3 });
    expect((await store().batchJobRows({ batchId: "batch_c", afterLine: 2, limit: 10 })).map((row) => [row.line, row.status])).toEqual([[3, undefined]]);
  });
}
