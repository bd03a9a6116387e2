/**
 * The SQLite store runs a lease after the other writes of its group commit (jobs-store.ts): at
 * the latest time any write of the group was given, and, if it fails there, undone alone — the acks it
 * carried stand and the call rejects with the lease's error. The group's submits are written at
 * its end (deferred-creates.ts): a lease takes them as they are inserted, and whatever fails
 * there fails only its own callers. On a real SQLite file, failures made real by triggers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { JobLeaseParams } from "../../src/core/job-store.js";
import { defaultQueueConfig, type QueueRecord } from "../../src/core/queue.js";
import { webhookIdOfEvent } from "../../src/core/job-event-log.js";
import { openSqliteStore, type SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { leaseParamsFor, newJobFor } from "../../src/stores/testkit/conformance-jobs-kit.js";

const T0 = 1_700_000_000_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function setup(): Promise<{ store: SqliteStore; filename: string; queue: QueueRecord }> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-lease-at-end-"));
  const filename = join(dir, "sluice.db");
  const store = openSqliteStore({ filename, pipelinedSync: true });
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { queue } = await store.queueCreate({ name: "jobs", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
  return { store, filename, queue };
}

async function submit(store: SqliteStore, queue: QueueRecord, atMs = T0, availableAtMs = atMs) {
  const { job, message } = newJobFor(queue, { createdAtMs: atMs, updatedAtMs: atMs, availableAtMs });
  return (await store.jobCreateMany({ items: [{ job, message }], nowMs: atMs })).results[0]!;
}

function leaseParams(queue: QueueRecord, token: string, extra: Partial<JobLeaseParams> = {}): JobLeaseParams {
  return { ...leaseParamsFor(queue, `${queue.id}.${token}`), ...extra };
}

describe("a lease at the end of its group commit (SQLite)", () => {
  /** A job leased with token a, so a later lease can carry its ack (a lease with nothing ready and no acks writes nothing). */
  async function running(store: SqliteStore, queue: QueueRecord): Promise<JobLeaseParams["acks"]> {
    const { job } = await submit(store, queue);
    await store.jobLease(leaseParams(queue, "tok-aaaaaaaa"));
    return [{ kind: "complete", id: job.id, leaseToken: `${queue.id}.tok-aaaaaaaa`, outputJson: '"ok"', resultTtlSeconds: 60 }];
  }

  it("leases at the latest time a write of its group was given, so a job submitted after its call is ready for it", async () => {
    const { store, queue } = await setup();
    const acks = await running(store, queue);
    // Asked for at T0; the submit that joins its commit comes at T0 + 5 and is ready only then.
    const leasing = store.jobLease(leaseParams(queue, "tok-bbbbbbbb", { acks }));
    const submitted = submit(store, queue, T0 + 5);
    const [r, s] = await Promise.all([leasing, submitted]);
    expect(r.acks.map((a) => a.ok && a.change.job.status)).toEqual(["succeeded"]);
    expect(r.leased.map((j) => [j.id, j.startedAtMs, j.leaseExpiresAtMs])).toEqual([[s.job.id, T0 + 5, T0 + 5 + 30_000]]);
  });

  it("never at a time no write of its group was given: a job that is ready only later stays queued", async () => {
    const { store, queue } = await setup();
    const acks = await running(store, queue);
    const leasing = store.jobLease(leaseParams(queue, "tok-bbbbbbbb", { acks }));
    const submitted = submit(store, queue, T0 + 5, T0 + 6);
    const [r, s] = await Promise.all([leasing, submitted]);
    expect(r.leased).toEqual([]);
    expect(await store.jobGet({ id: s.job.id })).toMatchObject({ status: "queued" });
  });

  it("a lease that fails is undone alone: the acks it carried stand, and the call rejects with its error", async () => {
    const { store, filename, queue } = await setup();
    const acks = await running(store, queue);
    const waiting = await submit(store, queue);
    // A real SQLite failure inside the lease: a trigger refuses every move to running.
    const other = new Database(filename);
    other.exec(`CREATE TRIGGER refuse_leases BEFORE UPDATE OF status ON jobs WHEN NEW.status = 'running'
      BEGIN SELECT RAISE(ABORT, 'leases refused by the test'); END`);
    other.close();
    const reported = store.jobLease(leaseParams(queue, "tok-bbbbbbbb", { acks }));
    await expect(reported).rejects.toThrow(/leases refused by the test/);
    expect(await store.jobGet({ id: acks![0]!.id })).toMatchObject({ status: "succeeded", outputJson: '"ok"' });
    expect(await store.jobGet({ id: waiting.job.id })).toMatchObject({ status: "queued", attempt: 0 });
    expect(await store.queueStats({ queueId: queue.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 1, inFlight: 0 });
  });

  it("a lease that fails after taking some of its commit's submits gives them back: they are written queued, and their submits succeed", async () => {
    const { store, filename, queue } = await setup();
    const acks = await running(store, queue);
    // The lease writes the submits' rows already running; let it take the first and refuse the
    // second (the acked job is no longer running by then), so one taken submit must be given back.
    const other = new Database(filename);
    other.exec(`CREATE TRIGGER refuse_second_leased_insert BEFORE INSERT ON jobs
      WHEN NEW.status = 'running' AND (SELECT count(*) FROM jobs WHERE status = 'running') >= 1
      BEGIN SELECT RAISE(ABORT, 'leased inserts refused by the test'); END`);
    other.close();
    const reported = store.jobLease(leaseParams(queue, "tok-bbbbbbbb", { acks }));
    const submitted = Promise.all([submit(store, queue), submit(store, queue)]);
    await expect(reported).rejects.toThrow(/leased inserts refused by the test/);
    const subs = await submitted;
    expect(await store.jobGet({ id: acks![0]!.id })).toMatchObject({ status: "succeeded" });
    for (const s of subs) {
      expect(s.created).toBe(true);
      expect(await store.jobGet({ id: s.job.id })).toMatchObject({ status: "queued", attempt: 0, seq: s.job.seq, messageSeq: s.job.messageSeq });
    }
    expect(await store.queueStats({ queueId: queue.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 2, inFlight: 0 });
  });

  it("submits whose deferred rows fail to be written fail, and only they: a later write of the same commit stands", async () => {
    const { store, filename, queue } = await setup();
    const other = new Database(filename);
    other.exec(`CREATE TRIGGER refuse_queued_inserts BEFORE INSERT ON jobs WHEN NEW.status = 'queued'
      BEGIN SELECT RAISE(ABORT, 'submits refused by the test'); END`);
    other.close();
    const first = submit(store, queue);
    const second = submit(store, queue);
    // Not beside the deferred submits: they are written just before it, and fail there.
    const created = store.queueCreate({ name: "after", config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    await expect(first).rejects.toThrow(/submits refused by the test/);
    await expect(second).rejects.toThrow(/submits refused by the test/);
    expect((await created).queue.name).toBe("after");
    expect(await store.jobList({ queueId: queue.id, limit: 10 })).toEqual([]);
    expect(await store.queueStats({ queueId: queue.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0 });
  });

  it("a lease that takes more of its commit's submits than one INSERT holds writes each its own message in flight, counted once", async () => {
    const { store, queue } = await setup();
    const acks = await running(store, queue);
    // A worker's report and lease; the 23 submits join its commit.
    const leasing = store.jobLease(leaseParams(queue, "tok-cccccccc", { acks, max: 23 }));
    const submitted = await Promise.all(Array.from({ length: 23 }, () => submit(store, queue)));
    const { leased } = await leasing;
    expect(leased.map((j) => j.id)).toEqual(submitted.map((s) => s.job.id));
    const rows = store.db.prepare<[], { seq: number; message_id: string; receive_count: number; receipt_token: string | null }>(
      `SELECT seq, message_id, receive_count, receipt_token FROM messages WHERE queue_id = ${queue.id} ORDER BY seq`,
    ).all();
    expect(rows).toHaveLength(23);
    for (const job of leased) {
      const stored = await store.jobGet({ id: job.id });
      expect(stored).toMatchObject({ status: "running", seq: job.seq, messageSeq: job.messageSeq });
      expect(rows.find((r) => r.seq === job.messageSeq)).toMatchObject({ message_id: job.id, receive_count: 1 });
      expect(rows.find((r) => r.seq === job.messageSeq)!.receipt_token).not.toBeNull();
    }
    const inputBytes = submitted.reduce((sum, s) => sum + Buffer.byteLength(s.job.inputJson), 0);
    expect(store.db.prepare(`SELECT messages, bytes FROM queue_message_counts WHERE queue_id = ${queue.id}`).get()).toEqual({ messages: 23, bytes: inputBytes });
    expect(await store.queueStats({ queueId: queue.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 23 });
  });

  it("a handoff of more submits than one append holds logs each job's events in order, and its webhooks name them", async () => {
    const { store, queue } = await setup();
    const acks = await running(store, queue);
    const before = (await store.jobEventBounds()).headId;
    const webhook = { url: "https://hooks.example/j", events: ["job.started" as const] };
    const leasing = store.jobLease(leaseParams(queue, "tok-dddddddd", { acks, max: 12 }));
    const submitted = await Promise.all(
      Array.from({ length: 12 }, async () => {
        const { job, message } = newJobFor(queue, { createdAtMs: T0, updatedAtMs: T0, availableAtMs: T0, webhook });
        return (await store.jobCreateMany({ items: [{ job, message }], nowMs: T0 })).results[0]!;
      }),
    );
    expect((await leasing).leased).toHaveLength(12);
    const events = await store.jobEventList({ afterId: before, limit: 100 });
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    for (const { job } of submitted) {
      const own = events.filter((e) => e.jobId === job.id);
      expect(own.map((e) => [e.type, e.job.status])).toEqual([["job.queued", "queued"], ["job.started", "running"]]);
      expect(own.every((e) => e.job.seq === job.seq)).toBe(true);
      const deliveries = await store.webhookDeliveryList({ jobId: job.id });
      expect(deliveries.map((d) => [d.id, d.event])).toEqual([[webhookIdOfEvent(own[1]!.id), "job.started"]]);
    }
  });
});
