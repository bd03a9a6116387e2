/**
 * The running-job counts behind maxRunning and maxRunningPerTenant (SQLite keeps one row per queue
 * and tenant that a limited lease made, moved by the store's writes of every job change, instead
 * of counting at each lease; every handle on the file moves them): every transition into or out of
 * running moves them — lease, submit handoff, complete, fail, retry,
 * release, lease expiry, attempt timeout, cancel, queue deletion — nothing else does, and they
 * survive a restart. Each step compares them with the running jobs themselves.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { IdSource } from "../../src/core/ids.js";
import { JobService } from "../../src/core/jobs/job-service.js";
import type { LeasedJob } from "../../src/core/job.js";
import { QueueService } from "../../src/core/queue-service.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { runningCounts } from "../support/running-counts.js";
import { type JobsHarness, openJobsHarness } from "./jobs-harness.js";

let h: JobsHarness;
beforeEach(() => {
  h = openJobsHarness();
});
afterEach(async () => {
  await h.close();
});

/** The kept counts of queue `q`, by scope ("queue" or a tenant), after checking each against the jobs. */
async function counts(queue = "q"): Promise<Record<string, number>> {
  const queueId = (await h.queues.getQueue("", queue)).id;
  const rows = runningCounts(h.store.db).filter((r) => r.queueId === queueId);
  for (const r of rows) expect(r.kept, `the ${r.scope} count of ${queue}`).toBe(r.actual);
  return Object.fromEntries(rows.map((r) => [r.scope, r.kept]));
}

async function submit(tenant?: string, extra: { timeoutSeconds?: number; maxAttempts?: number } = {}): Promise<string> {
  return (await h.jobs.submit("", "q", { input: { tenant }, ...(tenant ? { tenant } : {}), ...extra })).job.id;
}

const byId = (jobs: LeasedJob[], id: string): LeasedJob => jobs.find((j) => j.id === id)!;

describe("running counts (SQLite)", () => {
  it("move with every transition into or out of running, and with nothing else", async () => {
    await h.jobs.updateQueueSettings("", "q", { maxRunning: 1_000, maxRunningPerTenant: 1_000 });
    const [a1, a2, a3, b1, , none] = [await submit("a"), await submit("a"), await submit("a"), await submit("b"), await submit("b"), await submit()];
    // The first limited lease counts once and keeps the rows from then on.
    expect(await counts()).toEqual({});
    let leased = await h.jobs.lease("", "q", { max: 100, leaseSeconds: 30 });
    expect(leased).toHaveLength(6);
    expect(await counts()).toEqual({ queue: 6, a: 3, b: 2 });

    await h.jobs.complete("", a1, { leaseId: byId(leased, a1).leaseToken, output: 1 });
    expect(await counts()).toEqual({ queue: 5, a: 2, b: 2 });
    await h.jobs.fail("", b1, { leaseId: byId(leased, b1).leaseToken, error: { message: "flaky" }, retryable: true });
    expect(await h.jobs.get("", b1)).toMatchObject({ status: "queued" });
    expect(await counts()).toEqual({ queue: 4, a: 2, b: 1 });
    await h.jobs.fail("", none, { leaseId: byId(leased, none).leaseToken, error: { message: "bad input" }, retryable: false });
    expect(await counts()).toEqual({ queue: 3, a: 2, b: 1 });
    await h.jobs.release("", a2, { leaseId: byId(leased, a2).leaseToken });
    expect(await counts()).toEqual({ queue: 2, a: 1, b: 1 });
    // A heartbeat (with progress) and a cancel request leave a running job running.
    await h.jobs.heartbeat("", a3, { leaseId: byId(leased, a3).leaseToken, progress: 0.5 });
    expect((await h.jobs.cancel("", a3)).status).toBe("running");
    expect(await counts()).toEqual({ queue: 2, a: 1, b: 1 });
    // The worker stops on the request: canceled.
    expect((await h.jobs.fail("", a3, { leaseId: byId(leased, a3).leaseToken, error: { message: "stopped" } })).status).toBe("canceled");
    expect(await counts()).toEqual({ queue: 1, a: 0, b: 1 });
    // A queued job canceled, and a failed one retried, were never running: no change.
    expect((await h.jobs.cancel("", a2)).status).toBe("canceled");
    expect((await h.jobs.retry("", none)).status).toBe("queued");
    expect(await counts()).toEqual({ queue: 1, a: 0, b: 1 });

    // The lease left runs out: the sweep queues its job again (attempts left).
    h.clock.advance(30_000);
    expect(await h.jobs.expireLeases()).toBe(1);
    expect(await counts()).toEqual({ queue: 0, a: 0, b: 0 });

    // b1, b2 and the retried job leased again; two reported with the next lease (one write:
    // complete, then lease), which takes the third.
    leased = await h.jobs.lease("", "q", { max: 2, leaseSeconds: 30 });
    expect(await counts()).toEqual({ queue: 2, a: 0, b: leased.filter((j) => j.tenant === "b").length });
    const next = await h.jobs.leaseWithAcks("", "q", { max: 5 }, leased.map((j) => ({ kind: "complete" as const, id: j.id, leaseId: j.leaseToken, output: 2 })));
    expect(next.acks.every((ack) => "ok" in ack && ack.ok)).toBe(true);
    expect(next.leased).toHaveLength(1);
    expect(await counts()).toEqual({ queue: 1, a: 0, b: next.leased.filter((j) => j.tenant === "b").length });
    for (const j of next.leased) await h.jobs.complete("", j.id, { leaseId: j.leaseToken });
    expect(await counts()).toEqual({ queue: 0, a: 0, b: 0 });

    // An attempt that runs past its timeout ends by the sweep too.
    const slow = await submit("a", { timeoutSeconds: 5, maxAttempts: 1 });
    const [slowLease] = await h.jobs.lease("", "q", { max: 1, leaseSeconds: 600 });
    expect(slowLease!.id).toBe(slow);
    expect(await counts()).toEqual({ queue: 1, a: 1, b: 0 });
    h.clock.advance(5_000);
    expect(await h.jobs.expireLeases()).toBe(1);
    expect(await h.jobs.get("", slow)).toMatchObject({ status: "failed", error: { type: "Timeout" } });
    expect(await counts()).toEqual({ queue: 0, a: 0, b: 0 });

    // A submit handed straight to a waiting lease starts running in the submit's own write.
    const waiting = h.jobs.lease("", "q", { max: 1, waitSeconds: 20 });
    await new Promise((r) => setImmediate(r));
    const handedOff = await submit("b");
    expect((await waiting).map((j) => j.id)).toEqual([handedOff]);
    expect(await counts()).toEqual({ queue: 1, a: 0, b: 1 });
    // Finished jobs pruned: they weren't running, no change.
    h.clock.advance(8 * 86_400_000);
    expect(await h.jobs.prune()).toBeGreaterThan(0);
    expect(await counts()).toEqual({ queue: 1, a: 0, b: 1 });
  });

  it("hold the caps exactly where the jobs are: the lease after a mix of transitions starts only the free slots", async () => {
    await h.jobs.updateQueueSettings("", "q", { maxRunning: 4, maxRunningPerTenant: 2 });
    for (let n = 0; n < 6; n++) await submit(n % 2 === 0 ? "a" : "b");
    const first = await h.jobs.lease("", "q", { max: 10, leaseSeconds: 30 });
    expect(first).toHaveLength(4);
    expect(await counts()).toEqual({ queue: 4, a: 2, b: 2 });
    // One ends, one is handed back, one fails to retry: three slots free, per tenant as they freed.
    const [x, y, z] = first.filter((j) => j.tenant !== undefined);
    await h.jobs.complete("", x!.id, { leaseId: x!.leaseToken });
    await h.jobs.release("", y!.id, { leaseId: y!.leaseToken });
    await h.jobs.fail("", z!.id, { leaseId: z!.leaseToken, error: { message: "again" }, retryable: true, retryAfterSeconds: 0 });
    const running = await counts();
    expect(running.queue).toBe(1);
    const again = await h.jobs.lease("", "q", { max: 10, leaseSeconds: 30 });
    expect(again.length).toBe(3);
    expect(await counts()).toEqual({ queue: 4, a: expect.any(Number), b: expect.any(Number) });
    const after = await counts();
    expect(after.a).toBeLessThanOrEqual(2);
    expect(after.b).toBeLessThanOrEqual(2);
  });

  it("are the same after a restart, and go with their queue when it is deleted", async () => {
    await h.jobs.updateQueueSettings("", "q", { maxRunning: 3 });
    for (let n = 0; n < 4; n++) await submit("a");
    await h.jobs.lease("", "q", { max: 2, leaseSeconds: 60 });
    expect(await counts()).toEqual({ queue: 2 });
    await h.restart();
    expect(await counts()).toEqual({ queue: 2 });
    // Still the cap: one more starts, not three.
    expect(await h.jobs.lease("", "q", { max: 10, leaseSeconds: 60 })).toHaveLength(1);
    expect(await counts()).toEqual({ queue: 3 });
    const queueId = (await h.queues.getQueue("", "q")).id;
    await h.queues.deleteQueue("", "q");
    expect(runningCounts(h.store.db).filter((r) => r.queueId === queueId)).toEqual([]);
  });

  it("are moved by every handle on the file, also by one opened before the row was made", async () => {
    await h.jobs.updateQueueSettings("", "q", { maxRunning: 10, maxRunningPerTenant: 10 });
    const other = openSqliteStore({ filename: join(h.dir, "sluice.db") });
    let n = 0;
    const ids: IdSource = { messageId: () => `00000000-0000-4000-a000-${String(++n).padStart(12, "0")}`, receiptToken: () => `other${String(++n).padStart(8, "0")}` };
    const otherQueues = new QueueService({ store: other, clock: h.clock, ids, senderId: "000000000000" });
    const otherJobs = new JobService({ store: other, queues: otherQueues, clock: h.clock, ids, senderId: "000000000000", random: () => 0.5 });
    try {
      for (let i = 0; i < 3; i++) await submit("a");
      // The rows are made by a lease through this handle; the other handle ends and starts jobs.
      const leased = await h.jobs.lease("", "q", { max: 2, leaseSeconds: 30 });
      expect(await counts()).toEqual({ queue: 2, a: 2 });
      await otherJobs.complete("", leased[0]!.id, { leaseId: leased[0]!.leaseToken, output: 1 });
      expect(await counts()).toEqual({ queue: 1, a: 1 });
      expect(await otherJobs.lease("", "q", { max: 5, leaseSeconds: 30 })).toHaveLength(1);
      expect(await counts()).toEqual({ queue: 2, a: 2 });
    } finally {
      otherJobs.close();
      otherQueues.waiters.closeAll();
      await other.close();
    }
  });
});
