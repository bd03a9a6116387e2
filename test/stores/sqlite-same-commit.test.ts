/**
 * What the SQLite store adds beyond the store contract: writes that arrive together share one
 * commit (group commit), and that commit's writes see each other in the order they came — a lease
 * runs after the group's other writes and takes the jobs submitted beside it, a later write sees
 * the group's submits. A store that commits per call need not do any of this (the conformance
 * suite, src/stores/testkit, holds for both), so these cases live here, on a real SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore, type SqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { T0, act } from "../../src/stores/testkit/conformance-context.js";
import { expectCode, jobCaseKit, newJobFor } from "../../src/stores/testkit/conformance-jobs-kit.js";

describe("SQLite: the writes of one group commit", () => {
  let dir: string;
  let sqlite: SqliteStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sluice-same-commit-"));
    sqlite = openSqliteStore({ filename: join(dir, "sluice.db"), pipelinedSync: true });
  });
  afterEach(async () => {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = (): SqliteStore => sqlite;
  const { makeQueue, submit, leaseParams, lease, reportFor } = jobCaseKit(store);

  it("jobs: a lease runs after the other writes of its commit: it gets the jobs submitted with it", async () => {
    const q = await makeQueue();
    const done = await submit(q);
    const token = `${q.id}.tok-aaaaaaaa`;
    await lease(q, { token });
    // A worker's report and a submit arrive together: the lease, asked for first, runs after the
    // submit's write in the same commit and takes its job (JobStore.jobLease).
    const reported = store().jobLease({
      ...leaseParams(q, `${q.id}.tok-bbbbbbbb`),
      acks: [{ kind: "complete", id: done.job.id, leaseToken: token, outputJson: '"ok"', resultTtlSeconds: 60 }],
    });
    const submitted = submit(q);
    const [r, s] = await Promise.all([reported, submitted]);
    expect(r.acks.map((a) => a.ok && a.change.job.status)).toEqual(["succeeded"]);
    expect(r.leased.map((j) => j.id)).toEqual([s.job.id]);
    expect(await store().jobGet({ id: s.job.id })).toMatchObject({ status: "running", leaseToken: `${q.id}.tok-bbbbbbbb` });
    });

    it("jobs: a lease at the end of its commit takes the commit's submits in receive order with the jobs ready before: priority, then age", async () => {
    const q = await makeQueue();
    const older = await submit(q, { priority: 5 });
    const leasing = lease(q, { max: 2, token: `${q.id}.tok-bbbbbbbb` });
    const submitted = await Promise.all([submit(q, { priority: 5 }), submit(q, { priority: 9 }), submit(q, { priority: 5 })]);
    const [fiveA, nine, fiveB] = submitted.map((s) => s.job.id);
    expect((await leasing).leased.map((j) => j.id)).toEqual([nine, older.job.id]);
    // The two it left are written queued, in the order they came.
    expect((await lease(q, { max: 5, token: `${q.id}.tok-cccccccc` })).leased.map((j) => j.id)).toEqual([fiveA, fiveB]);
    });

    it("jobs: a job leased in the commit that submits it is like any leased job: running, in flight, retried once its lease expires", async () => {
    const q = await makeQueue();
    const acks = await reportFor(q);
    const token = `${q.id}.tok-bbbbbbbb`;
    const reported = store().jobLease({ ...leaseParams(q, token), acks });
    const s = await submit(q);
    const r = await reported;
    expect(r.leased.map((j) => j.id)).toEqual([s.job.id]);
    // The submit answers the job as submitted; the lease, as it leaves it.
    expect(s.job).toMatchObject({ status: "queued", attempt: 0 });
    expect(r.leased[0]).toMatchObject({ status: "running", attempt: 1, leaseToken: token, startedAtMs: T0, leaseExpiresAtMs: T0 + 30_000, seq: s.job.seq, messageSeq: s.job.messageSeq });
    expect(await store().jobGet({ id: s.job.id })).toMatchObject({ status: "running", attempt: 1, leaseToken: token, messageSeq: s.job.messageSeq });
    expect(await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 1 });
    expect((await lease(q, { nowMs: T0 + 29_999 })).leased).toEqual([]);
    // Its message comes back when the lease ends, as a received message's does.
    expect((await lease(q, { nowMs: T0 + 30_000, token: `${q.id}.tok-cccccccc` })).leased.map((j) => [j.id, j.attempt])).toEqual([[s.job.id, 2]]);
    const done = await act(store(), { kind: "complete", id: s.job.id, leaseToken: `${q.id}.tok-cccccccc`, nowMs: T0 + 30_001, outputJson: '"ok"', resultTtlSeconds: 60 });
    expect(done.job.status).toBe("succeeded");
    expect(await store().queueStats({ queueId: q.id, nowMs: T0 + 30_001, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0 });
    });

    it("jobs: a later write of the same commit sees the commit's submits (a cancel of one)", async () => {
    const q = await makeQueue();
    const { job, message } = newJobFor(q);
    const [created, canceled] = await Promise.all([store().jobCreateMany({ items: [{ job, message }], nowMs: T0 }), act(store(), { kind: "cancel", id: job.id, nowMs: T0, resultTtlSeconds: 60 })]);
    expect(created.results[0]!.created).toBe(true);
    expect(canceled.job.status).toBe("canceled");
    expect(await store().jobGet({ id: job.id })).toMatchObject({ status: "canceled" });
    expect(await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 0 });
    });

    it("jobs: a submit to a queue deleted earlier in the same commit fails alone; a submit to another queue stands", async () => {
    const q = await makeQueue();
    const other = await makeQueue("other");
    const before = submit(q);
    const deleted = store().queueDelete({ id: q.id, nowMs: T0 });
    const after = submit(q);
    const elsewhere = submit(other);
    const [b, d] = await Promise.all([before, deleted]);
    expect(d.liveJobIds).toEqual([b.job.id]);
    await expectCode(after, "QueueNotFound");
    const e = await elsewhere;
    expect(await store().jobGet({ id: e.job.id })).toMatchObject({ status: "queued" });
    });

    it("jobs: many submits in one commit are kept in the order they came", async () => {
    const q = await makeQueue();
    const submitted = await Promise.all(Array.from({ length: 25 }, () => submit(q)));
    const seqs = submitted.map((s) => s.job.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(submitted.map((s) => s.job.messageSeq)).size).toBe(25);
    expect((await lease(q, { max: 25 })).leased.map((j) => j.id)).toEqual(submitted.map((s) => s.job.id));
    });
});
