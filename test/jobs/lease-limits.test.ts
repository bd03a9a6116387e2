/**
 * A queue's limits on starting jobs, against a real server on a manual clock: maxRunning and
 * rateLimitPerSecond hold leases back for every worker together — the held-back lease waits (a
 * long poll), woken by a slot freeing or the next token, never refused — and tenants share a
 * queue fairly, each capped by maxRunningPerTenant. The fairness figures are in the closing note.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/index.js";
import { waitFor, within } from "../support/wait.js";
import { type Json, type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer;
afterEach(async () => {
  await s?.stop();
});

async function submitMany(queue: string, bodies: Json[]): Promise<Json[]> {
  const out: Json[] = [];
  for (let i = 0; i < bodies.length; i += 100) {
    const res = await s.api("POST", `/v1/queues/${queue}/jobs/batch`, { jobs: bodies.slice(i, i + 100) });
    expect(res.status).toBe(200);
    out.push(...(res.body.results as Json[]).map((r) => r.job));
  }
  return out;
}

async function lease(queue: string, body: Json = {}): Promise<Json[]> {
  const res = await s.api("POST", `/v1/queues/${queue}/leases`, { max: 10, ...body });
  expect(res.status).toBe(200);
  return res.body.jobs;
}

/** Resolves once the server holds `n` long-polling leases (their queue's waiters). */
async function heldLeases(queueName: string, n: number): Promise<void> {
  await waitFor(async () => {
    const q = await s.server.queues.getQueue("", queueName);
    return s.server.queues.waiters.waiterCount(q.id) >= n;
  }, { what: `${n} held leases` });
}

describe("queue settings: rateLimitPerSecond, maxRunning, maxRunningPerTenant", () => {
  it("are set, shown and cleared through PUT /v1/queues/{queue}; bad values are refused, changing nothing", async () => {
    s = await startJobsServer();
    const put = await s.api("PUT", "/v1/queues/l", { rateLimitPerSecond: 5, maxRunning: 10, maxRunningPerTenant: 2 });
    expect(put.body.queue.settings).toMatchObject({ rateLimitPerSecond: 5, maxRunning: 10, maxRunningPerTenant: 2 });
    for (const bad of [{ maxRunning: 0 }, { rateLimitPerSecond: 1.5 }, { maxRunningPerTenant: -1 }, { rateLimitPerSecond: "5" }]) {
      expect((await s.api("PUT", "/v1/queues/l", bad)).status, JSON.stringify(bad)).toBe(400);
    }
    const cleared = await s.api("PUT", "/v1/queues/l", { rateLimitPerSecond: null, maxRunning: null });
    expect(cleared.body.queue.settings).toMatchObject({ rateLimitPerSecond: null, maxRunning: null, maxRunningPerTenant: 2 });
  });
});

describe("maxRunning", () => {
  it("leases only up to the cap, and a lease held back is answered when a running job finishes", async () => {
    s = await startJobsServer();
    await s.api("PUT", "/v1/queues/m", { maxRunning: 2 });
    await submitMany("m", Array.from({ length: 5 }, (_, n) => ({ input: n })));
    const first = await lease("m");
    expect(first).toHaveLength(2);
    expect(await lease("m")).toEqual([]);
    // A long poll beyond the cap waits — the clock never moves here, so only the completion can wake it.
    const held = lease("m", { waitSeconds: 20 });
    await heldLeases("m", 1);
    await s.api("POST", `/v1/jobs/${first[0].id}/complete`, { leaseId: first[0].leaseId, output: 1 });
    const woken = await within(10_000, held, "the held lease");
    expect(woken).toHaveLength(1);
    expect(await lease("m")).toEqual([]);
  });
});

describe("rateLimitPerSecond", () => {
  it("starts at most a second's worth at once, then one per token; a held lease is answered when its token is due", async () => {
    const clock = new ManualClock(Date.now());
    s = await startJobsServer({ clock });
    await s.api("PUT", "/v1/queues/r", { rateLimitPerSecond: 4 });
    await submitMany("r", Array.from({ length: 20 }, (_, n) => ({ input: n })));
    expect(await lease("r")).toHaveLength(4);
    expect(await lease("r")).toEqual([]);
    const held = lease("r", { waitSeconds: 20 });
    await heldLeases("r", 1);
    clock.advance(250); // one token
    expect(await within(10_000, held, "the held lease")).toHaveLength(1);
    clock.advance(1_000); // a full bucket again, never more
    expect(await lease("r")).toHaveLength(4);
    // Every worker together: two workers' leases share the one bucket.
    clock.advance(500);
    const [a, b] = await Promise.all([lease("r", { max: 2 }), lease("r", { max: 2 })]);
    expect(a.length + b.length).toBe(2);
  });
});

describe("tenants", () => {
  it("a tenant with 10,000 queued jobs delays another tenant's first job by at most one job", async () => {
    s = await startJobsServer();
    await submitMany("t", Array.from({ length: 10_000 }, (_, n) => ({ input: n, tenant: "bulk" })));
    await submitMany("t", [{ input: "first", tenant: "interactive" }]);
    const order: string[] = [];
    for (let i = 0; i < 4; i++) order.push(...(await lease("t", { max: 1 })).map((j) => j.tenant as string));
    const position = order.indexOf("interactive");
    expect(position).toBeGreaterThanOrEqual(0);
    expect(position).toBeLessThanOrEqual(1);
    console.log(`fairness: behind 10,000 queued jobs of another tenant, a tenant's first job was leased ${position + 1}${position === 0 ? "st" : "nd"}`);
    // The backlog's 10,000 submits are 10,000 commits on PostgreSQL: time on a busy machine.
  }, 240_000);

  it("backlogged tenants share every lease evenly, and a tenant that comes late starts level, not ahead", async () => {
    s = await startJobsServer();
    await submitMany("f", Array.from({ length: 2_000 }, (_, n) => ({ input: n, tenant: "bulk" })));
    await submitMany("f", Array.from({ length: 300 }, (_, n) => ({ input: n, tenant: "steady" })));
    const share = (jobs: Json[]): Record<string, number> => {
      const counts: Record<string, number> = {};
      for (const j of jobs) counts[j.tenant as string] = (counts[j.tenant as string] ?? 0) + 1;
      return counts;
    };
    // 20 leases of 10: each splits 5 / 5, whatever the backlogs (2,000 against 300).
    for (let i = 0; i < 20; i++) expect(share(await lease("f")), `lease ${i + 1}`).toEqual({ bulk: 5, steady: 5 });
    // A third tenant after 100 jobs each: it gets its turn at once, but no credit for the past.
    await submitMany("f", Array.from({ length: 50 }, (_, n) => ({ input: n, tenant: "late" })));
    const next = [...(await lease("f", { max: 30 })), ...(await lease("f", { max: 30 }))];
    const firstLate = next.findIndex((j) => j.tenant === "late");
    expect(share(next)).toEqual({ bulk: 20, steady: 20, late: 20 });
    expect(firstLate).toBeLessThanOrEqual(2);
    console.log(`fairness: 20 leases of 10 with backlogs 2,000 / 300 → 5 / 5 each; a late tenant's first job at position ${firstLate + 1}, then 20 / 20 / 20 of the next 60`);
  });

  it("maxRunningPerTenant caps each tenant; the others keep going, and a capped tenant resumes when its job ends", async () => {
    s = await startJobsServer();
    await s.api("PUT", "/v1/queues/c", { maxRunningPerTenant: 2 });
    await submitMany("c", [...Array.from({ length: 6 }, (_, n) => ({ input: n, tenant: "a" })), ...Array.from({ length: 6 }, (_, n) => ({ input: n, tenant: "b" }))]);
    const leased = await lease("c", { max: 10 });
    expect(leased.map((j) => j.tenant).sort()).toEqual(["a", "a", "b", "b"]);
    expect(await lease("c")).toEqual([]);
    const held = lease("c", { waitSeconds: 20 });
    await heldLeases("c", 1);
    const doneA = leased.find((j) => j.tenant === "a")!;
    await s.api("POST", `/v1/jobs/${doneA.id}/complete`, { leaseId: doneA.leaseId, output: 1 });
    expect((await within(10_000, held, "the held lease")).map((j: Json) => j.tenant)).toEqual(["a"]);
  });

  it("rateLimitPerTenantPerSecond starts each tenant at its own rate; a held lease is answered when a tenant's token is due", async () => {
    const clock = new ManualClock(Date.now());
    s = await startJobsServer({ clock });
    const put = await s.api("PUT", "/v1/queues/t", { rateLimitPerTenantPerSecond: 2 });
    expect(put.body.queue.settings).toMatchObject({ rateLimitPerTenantPerSecond: 2 });
    for (const bad of [{ rateLimitPerTenantPerSecond: 0 }, { rateLimitPerTenantPerSecond: 0.5 }, { rateLimitPerTenantPerSecond: "2" }]) {
      const res = await s.api("PUT", "/v1/queues/t", bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.message).toMatch(/rateLimitPerTenantPerSecond/);
    }
    await submitMany("t", [...Array.from({ length: 10 }, (_, n) => ({ input: n, tenant: "flood" })), { input: "q", tenant: "quiet" }, { input: "none" }]);
    const first = await lease("t", { max: 10 });
    expect(first.map((j) => j.tenant ?? "-").sort()).toEqual(["-", "flood", "flood", "quiet"]);
    expect(await lease("t")).toEqual([]);
    const held = lease("t", { waitSeconds: 20 });
    await heldLeases("t", 1);
    clock.advance(500); // one of flood's tokens
    expect((await within(10_000, held, "the held lease")).map((j: Json) => j.tenant)).toEqual(["flood"]);
    const cleared = await s.api("PUT", "/v1/queues/t", { rateLimitPerTenantPerSecond: null });
    expect(cleared.body.queue.settings).toMatchObject({ rateLimitPerTenantPerSecond: null });
    expect(await lease("t", { max: 10 })).toHaveLength(7);
  });
});
