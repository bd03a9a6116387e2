/**
 * Where the SQLite store keeps a job's input: the input of a job with requires (migration 052) in
 * job_inputs, its job row and its message's body holding ''; any other job's in its row, its
 * message's body holding '' (kept-bodies.ts) — read back whole wherever a job or its message is
 * read (get, list, lease, the event log, a peek, an SQS receive), counted in its queue's bytes as
 * before, put back in the message when it is dead-lettered, and gone with its job (pruned, or its
 * queue deleted).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { jobCaseKit } from "../../src/stores/testkit/conformance-jobs-kit.js";
import { T0, act } from "../../src/stores/testkit/conformance-context.js";
import { messageReceive } from "../../src/stores/testkit/one-call.js";
import { type SqliteStore, openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";

const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(): { store: SqliteStore; raw: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), "sluice-job-inputs-"));
  dirs.push(dir);
  const filename = join(dir, "sluice.db");
  const store = openSqliteStore({ filename });
  stores.push(store);
  return { store, raw: new Database(filename, { readonly: true }) };
}

interface KeptMessage {
  queue_id: number;
  body: string;
  body_bytes: number | null;
}

/** A message's row as stored: its queue, its own body, and body_bytes when its job keeps the body. */
function messageRow(raw: Database.Database, messageId: string): KeptMessage | undefined {
  return raw.prepare<[string], KeptMessage>("SELECT queue_id, body, body_bytes FROM messages WHERE message_id = ?").get(messageId);
}

/** The bytes the queue's kept counts hold for it. */
function queueBytes(raw: Database.Database, queueId: number): number | undefined {
  return raw.prepare<[number], number>("SELECT bytes FROM queue_message_counts WHERE queue_id = ?").pluck().get(queueId);
}

describe("where a job's input is kept (SQLite)", () => {
  it("is kept off the job's rows, read back whole, and counted in its queue's bytes", async () => {
    const { store, raw } = open();
    const kit = jobCaseKit(() => store);
    const q = await kit.makeQueue("gpu");
    const input = JSON.stringify({ prompt: "é".repeat(300) });
    const plain = (await kit.submit(q, { inputJson: input })).job;
    const classed = (await kit.submit(q, { inputJson: input, requires: { gpu: "a100" } })).job;

    const rowInput = raw.prepare<[string], string>("SELECT input FROM jobs WHERE id = ?").pluck();
    expect(rowInput.get(plain.id)).toBe(input);
    expect(rowInput.get(classed.id)).toBe("");
    expect(raw.prepare("SELECT input FROM job_inputs").pluck().all()).toEqual([input]);
    expect(messageRow(raw, plain.id)).toEqual({ queue_id: q.id, body: "", body_bytes: Buffer.byteLength(input) });
    expect(messageRow(raw, classed.id)).toEqual({ queue_id: q.id, body: "", body_bytes: Buffer.byteLength(input) });
    expect(queueBytes(raw, q.id)).toBe(2 * Buffer.byteLength(input));

    expect((await store.messagePeek({ queueId: q.id, minSentAtMs: 0, limit: 10 })).map((m) => m.body)).toEqual([input, input]);
    expect((await store.jobGet({ id: classed.id }))!.inputJson).toBe(input);
    expect((await store.jobList({ queueId: q.id, limit: 10 })).map((j) => j.inputJson)).toEqual([input, input]);
    const leased = await store.jobLease({ ...kit.leaseParams(q, `${q.id}.tok-a`), labels: { gpu: "a100" } });
    expect(leased.leased.map((j) => [j.id, j.inputJson])).toEqual([
      [plain.id, input],
      [classed.id, input],
    ]);
    const events = await store.jobEventList({ afterId: 0, limit: 100, jobId: classed.id });
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e.job.inputJson).toBe(input);

    await store.queueDelete({ id: q.id, nowMs: T0 });
    expect(raw.prepare("SELECT count(*) FROM job_inputs").pluck().get()).toBe(0);
  });

  it("puts the body back in a dead-lettered message, and goes with its job", async () => {
    const { store, raw } = open();
    const kit = jobCaseKit(() => store);
    const q = await kit.makeQueue("gpu");
    const dlq = await kit.makeQueue("gpu-dlq");
    const input = JSON.stringify({ prompt: "x".repeat(500) });
    const job = (await kit.submit(q, { inputJson: input, requires: { gpu: "a100" } })).job;
    const [leased] = (await store.jobLease({ ...kit.leaseParams(q, `${q.id}.tok-b`), labels: { gpu: "a100" } })).leased;
    await act(store, { kind: "fail", ...kit.policy(dlq), id: job.id, leaseToken: leased!.leaseToken, nowMs: T0, error: { message: "bad input" }, retryable: false });

    expect(messageRow(raw, job.id)).toEqual({ queue_id: dlq.id, body: input, body_bytes: null });
    expect([queueBytes(raw, q.id), queueBytes(raw, dlq.id)]).toEqual([0, Buffer.byteLength(input)]);

    const { jobs } = await store.jobPrune({ nowMs: T0 + 365 * 86_400_000, limit: 10 });
    expect(jobs).toBe(1);
    expect(raw.prepare("SELECT count(*) FROM job_inputs").pluck().get()).toBe(0);
  });

  it("gives an SQS receive a job message's body from its job, and puts it back when the receive dead-letters it", async () => {
    const { store, raw } = open();
    const kit = jobCaseKit(() => store);
    const q = await kit.makeQueue("plain");
    const dlq = await kit.makeQueue("plain-dlq");
    const input = JSON.stringify({ prompt: "ü".repeat(200) });
    const job = (await kit.submit(q, { inputJson: input })).job;
    const receive = (token: string) =>
      messageReceive(store, { queueId: q.id, max: 10, nowMs: T0, visibleUntilMs: T0, minSentAtMs: 0, receiptToken: token, deadLetter: { queueId: dlq.id, maxReceiveCount: 1, sourceQueueName: "plain" } });

    expect((await receive("tok-1")).messages.map((m) => [m.messageId, m.body])).toEqual([[job.id, input]]);
    // Received once already: the next receive moves it to the dead-letter queue, body and all.
    expect((await receive("tok-2")).messages).toEqual([]);
    expect(messageRow(raw, job.id)).toEqual({ queue_id: dlq.id, body: input, body_bytes: null });
    expect([queueBytes(raw, q.id), queueBytes(raw, dlq.id)]).toEqual([0, Buffer.byteLength(input)]);
  });

  it("keeps no body in the message of a job leased in its submit's commit, and puts it back when the job is dead-lettered", async () => {
    const { store, raw } = open();
    const kit = jobCaseKit(() => store);
    const q = await kit.makeQueue("handoff");
    const dlq = await kit.makeQueue("handoff-dlq");
    const input = JSON.stringify({ prompt: "y".repeat(400) });
    // A lease carrying a report writes in a group commit; a submit beside it is written leased to it.
    const first = (await kit.submit(q, { inputJson: input })).job;
    await store.jobLease(kit.leaseParams(q, `${q.id}.tok-c`));
    const acks = [{ kind: "complete" as const, id: first.id, leaseToken: `${q.id}.tok-c`, outputJson: '"ok"', resultTtlSeconds: 60 }];
    const [lease, created] = await Promise.all([store.jobLease({ ...kit.leaseParams(q, `${q.id}.tok-d`), acks }), kit.submit(q, { inputJson: input })]);
    expect(lease.acks.map((a) => a.ok)).toEqual([true]);
    const [leased] = lease.leased;
    expect(leased?.id).toBe(created.job.id);
    expect(leased?.inputJson).toBe(input);
    expect(messageRow(raw, leased!.id)).toEqual({ queue_id: q.id, body: "", body_bytes: Buffer.byteLength(input) });

    await act(store, { kind: "fail", ...kit.policy(dlq), id: leased!.id, leaseToken: leased!.leaseToken, nowMs: T0, error: { message: "bad input" }, retryable: false });
    expect(messageRow(raw, leased!.id)).toEqual({ queue_id: dlq.id, body: input, body_bytes: null });
  });
});
