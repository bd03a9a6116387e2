/**
 * Conformance cases for worker labels and job requirements: a job with `requires` is leased only
 * by a lease whose labels contain every pair, in receive order with the jobs that require nothing,
 * and keeps its requirement through retries and beside tenants.
 */
import { expect } from "vitest";
import type { JobLeaseParams, NewJob } from "../../core/job-store.js";
import type { QueueRecord } from "../../core/queue.js";
import type { ConformanceContext } from "./conformance-context.js";
import { T0, act } from "./conformance-context.js";
import { jobCaseKit, leaseParamsFor } from "./conformance-jobs-kit.js";

export function registerRequirementCases({ store, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);
  let tokens = 0;
  const lease = (queue: QueueRecord, labels: Record<string, string> | undefined, p: Partial<JobLeaseParams> = {}) =>
    store().jobLease({ ...leaseParamsFor(queue, `${queue.id}.req-${++tokens}`), max: 10, ...(labels ? { labels } : {}), ...p });
  const submit = async (queue: QueueRecord, overrides: Partial<NewJob> = {}) => (await kit.submit(queue, overrides)).job;
  const ids = (r: { leased: Array<{ id: string }> }) => r.leased.map((j) => j.id);

  test("requires: only a lease whose labels contain every pair takes the job; one without labels takes only jobs that require nothing", async () => {
    const q = await kit.makeQueue("labelled");
    const plain = await submit(q);
    const a100 = await submit(q, { requires: { gpu: "a100" } });
    const a100eu = await submit(q, { requires: { region: "eu", gpu: "a100" } });
    expect((await store().jobGet({ id: a100eu.id }))!.requires).toEqual({ gpu: "a100", region: "eu" });
    expect(ids(await lease(q, undefined))).toEqual([plain.id]);
    expect(ids(await lease(q, { gpu: "h100", region: "eu" }))).toEqual([]);
    expect(ids(await lease(q, { gpu: "a100" }))).toEqual([a100.id]);
    const last = await lease(q, { gpu: "a100", region: "eu", zone: "b" });
    expect(ids(last)).toEqual([a100eu.id]);
    expect(last.leased[0]!.requires).toEqual({ gpu: "a100", region: "eu" });
  });

  test("requires: a labelled lease takes the classes it serves and the jobs that require nothing in receive order (priority, then age)", async () => {
    const q = await kit.makeQueue("merged");
    const first = await submit(q, { requires: { gpu: "a100" } });
    const second = await submit(q);
    const third = await submit(q, { requires: { gpu: "a100", mem: "80g" } });
    const urgent = await submit(q, { requires: { gpu: "a100" }, priority: 5 });
    const other = await submit(q, { requires: { gpu: "t4" } });
    const got = await lease(q, { gpu: "a100", mem: "80g" }, { max: 3 });
    expect(ids(got)).toEqual([urgent.id, first.id, second.id]);
    expect(ids(await lease(q, { gpu: "a100", mem: "80g" }))).toEqual([third.id]);
    expect(ids(await lease(q, { gpu: "t4" }))).toEqual([other.id]);
  });

  test("requires: a lease serving many classes takes them in receive order, however its jobs fall among them", async () => {
    const q = await kit.makeQueue("many-classes");
    const every: Record<string, string> = {};
    for (let i = 0; i < 20; i++) every[`k${i}`] = "y";
    const submitted = [];
    // One class holds the oldest jobs (a lease takes more of it than an even share), then the
    // classes take turns; one job of higher priority comes first. A class the lease does not
    // serve sits among them: the lease merges the heads of the twenty it serves.
    for (let i = 0; i < 5; i++) submitted.push(await submit(q, { requires: { k0: "y" } }));
    await submit(q, { requires: { k20: "y" } });
    for (let i = 0; i < 40; i++) submitted.push(await submit(q, { requires: { [`k${i % 20}`]: "y" }, ...(i === 30 ? { priority: 3 } : {}) }));
    const urgent = submitted[35]!;
    const expected = [urgent, ...submitted.filter((j) => j !== urgent)].map((j) => j.id);
    const got: string[] = [];
    for (const max of [5, 4, 7, 10, 30]) got.push(...ids(await lease(q, every, { max })));
    expect(got).toEqual(expected);
  });

  test("requires: a lease serving every class of the queue takes its jobs in receive order; they are counted, peeked and due like any", async () => {
    const q = await kit.makeQueue("every-class");
    const a = await submit(q, { requires: { k0: "y" } });
    const b = await submit(q);
    const c = await submit(q, { requires: { k1: "y" }, priority: 2 });
    const d = await submit(q, { requires: { k1: "y" } });
    const e = await submit(q, { priority: 2 });
    const f = await submit(q, { requires: { k0: "y", k1: "y" } });
    const later = await submit(q, { requires: { k0: "y" }, availableAtMs: T0 + 60_000 });
    expect(await store().messageNextVisibleAt({ queueId: q.id, nowMs: T0 })).toBe(T0 + 60_000);
    expect((await store().messagePeek({ queueId: q.id, minSentAtMs: 0, limit: 10 })).map((m) => m.messageId).sort()).toEqual([a, b, c, d, e, f, later].map((j) => j.id).sort());
    const every = { k0: "y", k1: "y", zone: "b" };
    expect(ids(await lease(q, every, { max: 3 }))).toEqual([c.id, e.id, a.id]);
    expect(ids(await lease(q, every))).toEqual([b.id, d.id, f.id]);
    expect(await store().queueStats({ queueId: q.id, nowMs: T0, minSentAtMs: 0 })).toMatchObject({ visible: 0, inFlight: 6, delayed: 1 });
    // The leases ran out: the jobs are ready again, in the same order, and so is the delayed one.
    expect(ids(await lease(q, every, { nowMs: T0 + 60_000 }))).toEqual([c.id, e.id, a.id, b.id, d.id, f.id, later.id]);
  });

  test("requires: a retried job keeps its requirement", async () => {
    const q = await kit.makeQueue("retried");
    const job = await submit(q, { requires: { gpu: "a100" } });
    const [leased] = (await lease(q, { gpu: "a100" })).leased;
    await act(store(), { kind: "fail", ...kit.policy(), id: job.id, leaseToken: leased!.leaseToken, nowMs: T0, error: { message: "oom" }, retryable: true, retryAfterSeconds: 0 });
    expect(ids(await lease(q, undefined, { nowMs: T0 + 1 }))).toEqual([]);
    expect(ids(await lease(q, { gpu: "a100" }, { nowMs: T0 + 1 }))).toEqual([job.id]);
  });

  test("requires: on a queue with tenants, a labelled lease still takes the jobs of its classes", async () => {
    const q = await kit.makeQueue("tenanted");
    const tenantJob = await submit(q, { tenant: "acme" });
    const gpuJob = await submit(q, { requires: { gpu: "a100" } });
    expect(ids(await lease(q, undefined))).toEqual([tenantJob.id]);
    expect(ids(await lease(q, { gpu: "a100" }))).toEqual([gpuJob.id]);
  });

  test("requires: beside tenants' backlogs, a labelled lease's classes take the turn of the jobs without a tenant in the fair rounds", async () => {
    const q = await kit.makeQueue("tenanted-backlog");
    const acme = [];
    const beta = [];
    for (let i = 0; i < 4; i++) acme.push(await submit(q, { tenant: "acme" }));
    for (let i = 0; i < 4; i++) beta.push(await submit(q, { tenant: "beta" }));
    const gpu = [await submit(q, { requires: { gpu: "a100" } }), await submit(q, { requires: { gpu: "a100" } })];
    // Three flows ready to this worker (two tenants and the jobs without one, its class among
    // them): a round serves each once, so the tenants' backlogs never starve its class.
    const sorted = (xs: string[]) => [...xs].sort();
    expect(sorted(ids(await lease(q, { gpu: "a100" }, { max: 3 })))).toEqual(sorted([acme[0]!.id, beta[0]!.id, gpu[0]!.id]));
    expect(sorted(ids(await lease(q, { gpu: "a100" }, { max: 3 })))).toEqual(sorted([acme[1]!.id, beta[1]!.id, gpu[1]!.id]));
    // A worker without labels has only the tenants' jobs to take.
    expect(sorted(ids(await lease(q, undefined, { max: 4 })))).toEqual(sorted([acme[2]!.id, acme[3]!.id, beta[2]!.id, beta[3]!.id]));
  });
}
