/**
 * Conformance cases for what jobs carry beyond a plain submit: dependencies (a child waits in its
 * submit's write, is queued or ended in its parent's), tenants (leases share a queue fairly) and
 * the lease limits (rate, running, per tenant), each decided inside the lease's write.
 */
import { expect } from "vitest";
import type { JobLeaseParams, NewJob } from "../../core/job-store.js";
import type { QueueRecord } from "../../core/queue.js";
import type { ConformanceContext } from "./conformance-context.js";
import { T0, act } from "./conformance-context.js";
import { expectCode, jobCaseKit, leaseParamsFor } from "./conformance-jobs-kit.js";

export function registerJobFlowCases({ store, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);
  let tokens = 0;
  const lease = (queue: QueueRecord, p: Partial<JobLeaseParams> = {}) => store().jobLease({ ...leaseParamsFor(queue, `${queue.id}.flow-${++tokens}`), max: 10, ...p });
  const complete = (id: string, leaseToken: string, nowMs = T0) => act(store(), { kind: "complete", id, leaseToken, nowMs, outputJson: `"${id}"`, resultTtlSeconds: 60 });
  const child = (queue: QueueRecord, parents: string[], overrides: Partial<NewJob> = {}) => kit.submit(queue, { dependsOn: parents, onParentFailure: "fail", ...overrides });

  test("dependsOn: a child waits (its message unleasable) until its parents succeed, then is queued in the same write", async () => {
    const q = await kit.makeQueue();
    const a = (await kit.submit(q)).job;
    const b = (await kit.submit(q)).job;
    const c = await child(q, [a.id, b.id]);
    expect(c.created && c.job.status).toBe("waiting");
    const first = await lease(q);
    expect(first.leased.map((j) => j.id).sort()).toEqual([a.id, b.id].sort());
    const done = await complete(a.id, first.leased[0]!.leaseToken);
    expect(done.followOn ?? []).toEqual([]);
    expect((await store().jobGet({ id: c.job.id }))!.status).toBe("waiting");
    const last = await complete(b.id, first.leased[0]!.leaseToken, T0 + 5);
    expect(last.followOn?.map((f) => [f.job.id, f.job.status, f.events])).toEqual([[c.job.id, "queued", ["job.queued"]]]);
    const next = await lease(q, { nowMs: T0 + 5 });
    expect(next.leased.map((j) => j.id)).toEqual([c.job.id]);
    expect(next.leased[0]!.dependsOn).toEqual([a.id, b.id]);
  });

  test("dependsOn: a failed parent fails its child and the child's children, a canceled one cancels; ignore runs it anyway", async () => {
    const q = await kit.makeQueue();
    const parent = (await kit.submit(q, { maxAttempts: 1 })).job;
    const strict = (await child(q, [parent.id])).job;
    const grandchild = (await child(q, [strict.id])).job;
    const lenient = (await child(q, [parent.id], { onParentFailure: "ignore" })).job;
    const [leased] = (await lease(q)).leased;
    const failed = await act(store(), { kind: "fail", ...kit.policy(), id: parent.id, leaseToken: leased!.leaseToken, nowMs: T0, error: { message: "boom" }, retryable: false });
    const moved = (failed.followOn ?? []).map((f) => [f.job.id, f.job.status, f.job.error?.type]);
    expect(moved).toContainEqual([strict.id, "failed", "ParentFailed"]);
    expect(moved).toContainEqual([lenient.id, "queued", undefined]);
    expect((await store().jobGet({ id: grandchild.id }))!).toMatchObject({ status: "failed", error: { type: "ParentFailed" } });
    expect((await store().jobGet({ id: strict.id }))!.error!.message).toMatch(new RegExp(`${parent.id}.*boom`));
    const other = (await kit.submit(q)).job;
    const canceledChild = (await child(q, [other.id])).job;
    const canceled = await act(store(), { kind: "cancel", id: other.id, nowMs: T0, resultTtlSeconds: 60 });
    expect(canceled.followOn?.map((f) => [f.job.id, f.job.status, f.job.error?.type])).toEqual([[canceledChild.id, "canceled", "ParentCanceled"]]);
  });

  test("dependsOn: submitted after its parent ended, a child is queued or ended at once; an unknown parent refuses the submit", async () => {
    const q = await kit.makeQueue();
    const ok = (await kit.submit(q)).job;
    const [l] = (await lease(q)).leased;
    await complete(ok.id, l!.leaseToken);
    expect((await child(q, [ok.id])).job.status).toBe("queued");
    const gone = (await kit.submit(q)).job;
    await act(store(), { kind: "cancel", id: gone.id, nowMs: T0, resultTtlSeconds: 60 });
    const ended = (await child(q, [gone.id], { webhook: { url: "https://hooks.example/child", events: ["job.canceled"] } })).job;
    expect(ended).toMatchObject({ status: "canceled", error: { type: "ParentCanceled" } });
    // Its end is a transition like any other: the webhook it subscribed to is queued with it.
    expect((await store().webhookDeliveryList({ jobId: ended.id })).map((d) => d.event)).toEqual(["job.canceled"]);
    const before = await store().jobCountByStatus({ queueId: q.id });
    await expectCode(child(q, ["no-such-job"]), "ValidationFailed");
    expect(await store().jobCountByStatus({ queueId: q.id })).toEqual(before);
  });

  test("dependsOn: canceling a waiting child ends it; a parent waited on is not pruned until its children ran", async () => {
    const q = await kit.makeQueue();
    const parent = (await kit.submit(q)).job;
    const c1 = (await child(q, [parent.id])).job;
    expect((await act(store(), { kind: "cancel", id: c1.id, nowMs: T0, resultTtlSeconds: 60 })).job.status).toBe("canceled");
    const c2 = (await child(q, [parent.id])).job;
    const [l] = (await lease(q)).leased;
    await complete(parent.id, l!.leaseToken);
    // Submitted once its parent ended: queued at once, it needs the parent as much.
    const c3 = (await child(q, [parent.id])).job;
    expect(c3.status).toBe("queued");
    await store().jobPrune({ nowMs: T0 + 61_000, limit: 100 });
    expect(await store().jobGet({ id: parent.id })).toBeDefined(); // c2 and c3 are queued and still need it
    const [l2] = (await lease(q, { nowMs: T0 + 61_000, max: 1 })).leased;
    expect(l2!.id).toBe(c2.id);
    await complete(c2.id, l2!.leaseToken, T0 + 61_000);
    await store().jobPrune({ nowMs: T0 + 61_000, limit: 100 });
    expect(await store().jobGet({ id: parent.id })).toBeDefined(); // c3 still needs it
    const [l3] = (await lease(q, { nowMs: T0 + 61_000 })).leased;
    expect(l3!.id).toBe(c3.id);
    await complete(c3.id, l3!.leaseToken, T0 + 61_000);
    await store().jobPrune({ nowMs: T0 + 200_000, limit: 100 });
    expect(await store().jobGet({ id: parent.id })).toBeUndefined();
  });

  test("tenants: a tenant with a backlog does not hold back another's first job; each lease takes one per tenant in turn", async () => {
    const q = await kit.makeQueue();
    for (let i = 0; i < 50; i++) await kit.submit(q, { tenant: "big" });
    const small = (await kit.submit(q, { tenant: "small" })).job;
    const firsts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { leased } = await lease(q, { max: 1 });
      firsts.push(leased[0]!.tenant!);
    }
    expect(firsts.slice(0, 2)).toContain("small");
    expect(firsts.filter((t) => t === "small")).toHaveLength(1);
    const ten = await lease(q, { max: 10 });
    expect(ten.leased.every((j) => j.tenant === "big")).toBe(true);
    expect((await store().jobGet({ id: small.id }))!.status).toBe("running");
  });

  test("limits: maxRunning and maxRunningPerTenant cap what a lease starts, saying which held it back", async () => {
    const q = await kit.makeQueue();
    for (let i = 0; i < 3; i++) await kit.submit(q, { tenant: "a" });
    for (let i = 0; i < 3; i++) await kit.submit(q, { tenant: "b" });
    const perTenant = await lease(q, { limits: { maxRunningPerTenant: 1 } });
    expect(perTenant.leased.map((j) => j.tenant).sort()).toEqual(["a", "b"]);
    expect(perTenant.limited).toEqual({ by: "maxRunningPerTenant" });
    const capped = await lease(q, { limits: { maxRunning: 3 } });
    expect(capped.leased).toHaveLength(1);
    expect(capped.limited).toMatchObject({ by: "maxRunning" });
    expect((await lease(q, { limits: { maxRunning: 3 } })).leased).toHaveLength(0);
    await complete(perTenant.leased[0]!.id, perTenant.leased[0]!.leaseToken);
    expect((await lease(q, { limits: { maxRunning: 3 } })).leased).toHaveLength(1);
  });

  test("limits: rateLimitPerSecond starts at most a bucket of one second's worth, refilled with time, shared by every lease", async () => {
    const q = await kit.makeQueue();
    for (let i = 0; i < 10; i++) await kit.submit(q);
    const limits = { rateLimitPerSecond: 4 };
    const burst = await lease(q, { limits, nowMs: T0 });
    expect(burst.leased).toHaveLength(4);
    const empty = await lease(q, { limits, nowMs: T0 + 100 });
    expect(empty.leased).toHaveLength(0);
    expect(empty.limited).toEqual({ by: "rateLimitPerSecond", retryAtMs: T0 + 250 });
    expect((await lease(q, { limits, nowMs: T0 + 500 })).leased).toHaveLength(2);
    expect((await lease(q, { nowMs: T0 + 500 })).leased).toHaveLength(4); // without the limit: the rest
  });

  test("limits: rateLimitPerTenantPerSecond gives each tenant its own bucket; jobs without a tenant are not held", async () => {
    const q = await kit.makeQueue();
    for (let i = 0; i < 6; i++) await kit.submit(q, { tenant: "busy" });
    for (let i = 0; i < 2; i++) await kit.submit(q, { tenant: "quiet" });
    for (let i = 0; i < 3; i++) await kit.submit(q);
    const limits = { rateLimitPerTenantPerSecond: 2 };
    const first = await lease(q, { limits, nowMs: T0, max: 10 });
    const count = (leased: Array<{ tenant?: string }>, tenant: string | undefined): number => leased.filter((j) => j.tenant === tenant).length;
    expect([count(first.leased, "busy"), count(first.leased, "quiet"), count(first.leased, undefined)]).toEqual([2, 2, 3]);
    expect(first.limited).toEqual({ by: "rateLimitPerTenantPerSecond", retryAtMs: T0 + 500 });
    const early = await lease(q, { limits, nowMs: T0 + 400, max: 10 });
    expect(early.leased).toHaveLength(0);
    expect(early.limited).toEqual({ by: "rateLimitPerTenantPerSecond", retryAtMs: T0 + 500 });
    const refilled = await lease(q, { limits, nowMs: T0 + 500, max: 10 });
    expect(refilled.leased.map((j) => j.tenant)).toEqual(["busy"]);
    // Idle past a full refill: the tenant starts a whole second's worth again, no more.
    const later = await lease(q, { limits, nowMs: T0 + 5_000, max: 10 });
    expect(later.leased.map((j) => j.tenant)).toEqual(["busy", "busy"]);
    expect(later.limited).toEqual({ by: "rateLimitPerTenantPerSecond", retryAtMs: T0 + 5_500 });
    expect((await lease(q, { nowMs: T0 + 5_000, max: 10 })).leased.map((j) => j.tenant)).toEqual(["busy"]); // without the limit: the rest
  });
}
