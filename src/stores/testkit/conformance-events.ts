/**
 * Conformance cases for the durable job event log (core/job-event-log.ts): every event of
 * every transition appended in its write, with ids that grow, are never reused and survive a
 * reopen; reads by position, queue and job; retention that prunes the oldest prefix and says so.
 */
import { expect } from "vitest";
import type { LoggedJobEvent } from "../../core/job-event-log.js";
import type { ConformanceContext } from "./conformance-context.js";
import { T0, act } from "./conformance-context.js";
import { jobCaseKit } from "./conformance-jobs-kit.js";

const summary = (events: LoggedJobEvent[]): Array<[string, string, string]> => events.map((e) => [e.jobId, e.type, e.job.status]);

export function registerEventLogCases({ store, reopen, another, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);

  test("every transition's events are logged in order, each with the job as it was then", async () => {
    const q = await kit.makeQueue();
    const before = (await store().jobEventBounds()).headId;
    const { job } = await kit.submit(q, { webhook: { url: "https://example.com/h", events: ["job.succeeded"] } });
    await kit.lease(q, { token: `${q.id}.t1`, nowMs: T0 + 10 });
    await act(store(), { kind: "heartbeat", id: job.id, leaseToken: `${q.id}.t1`, nowMs: T0 + 20, progress: 0.5 });
    await act(store(), { kind: "complete", id: job.id, leaseToken: `${q.id}.t1`, nowMs: T0 + 30, outputJson: '{"ok":true}', resultTtlSeconds: 60 });
    const events = await store().jobEventList({ afterId: before, limit: 100 });
    expect(summary(events)).toEqual([
      [job.id, "job.queued", "queued"],
      [job.id, "job.started", "running"],
      [job.id, "job.progress", "running"],
      [job.id, "job.succeeded", "succeeded"],
    ]);
    expect(events.map((e) => e.atMs)).toEqual([T0, T0 + 10, T0 + 20, T0 + 30]);
    for (let i = 1; i < events.length; i++) expect(events[i]!.id).toBeGreaterThan(events[i - 1]!.id);
    // The job at each event, its input (which never changes) included; never its lease token.
    expect(events[2]!.job.progress).toBe(0.5);
    expect(events[3]!.job.outputJson).toBe('{"ok":true}');
    expect(events.every((e) => e.job.inputJson === job.inputJson && e.job.leaseToken === undefined && e.queueName === "jobs")).toBe(true);
    expect((await store().jobEventBounds()).headId).toBe(events[3]!.id);
    // The webhook delivery of an event is named by that event's id.
    const [delivery] = await store().webhookDeliveryList({ jobId: job.id });
    expect(delivery!.id).toBe(`msg_${events[3]!.id}`);
  });

  test("reads filter by queue and job, stop at throughId and limit, and resume after any id", async () => {
    const a = await kit.makeQueue("a");
    const b = await kit.makeQueue("b");
    const before = (await store().jobEventBounds()).headId;
    const ja = (await kit.submit(a)).job;
    const jb = (await kit.submit(b)).job;
    await act(store(), { kind: "cancel", id: ja.id, nowMs: T0 + 1, resultTtlSeconds: 60 });
    const all = await store().jobEventList({ afterId: before, limit: 100 });
    expect(summary(all)).toEqual([
      [ja.id, "job.queued", "queued"],
      [jb.id, "job.queued", "queued"],
      [ja.id, "job.canceled", "canceled"],
    ]);
    expect(summary(await store().jobEventList({ afterId: before, limit: 100, queueName: "a" }))).toEqual([summary(all)[0], summary(all)[2]]);
    expect(summary(await store().jobEventList({ afterId: before, limit: 100, jobId: jb.id }))).toEqual([summary(all)[1]]);
    expect(summary(await store().jobEventList({ afterId: before, limit: 100, jobId: jb.id, queueName: "a" }))).toEqual([]);
    expect((await store().jobEventList({ afterId: all[0]!.id, limit: 100 })).map((e) => e.id)).toEqual([all[1]!.id, all[2]!.id]);
    expect((await store().jobEventList({ afterId: before, throughId: all[1]!.id, limit: 100 })).map((e) => e.id)).toEqual([all[0]!.id, all[1]!.id]);
    expect((await store().jobEventList({ afterId: before, limit: 1 })).map((e) => e.id)).toEqual([all[0]!.id]);
  });

  test("events outlive a reopen; ids are never reused, even after the newest are pruned", async () => {
    const q = await kit.makeQueue();
    await kit.submit(q);
    await kit.submit(q);
    const { headId } = await store().jobEventBounds();
    const reopened = await reopen();
    expect((await reopened.jobEventList({ afterId: 0, limit: 100 })).map((e) => e.id).slice(-2)).toEqual([headId - 1, headId]);
    expect(await reopened.jobEventPrune({ beforeAtMs: T0 + 1, limit: 100 })).toBeGreaterThanOrEqual(2);
    expect(await reopened.jobEventBounds()).toEqual({ headId, floorId: headId });
    await reopen();
    const q2 = (await store().queueGet({ name: q.name }))!;
    const { job } = await kit.submit(q2);
    const [next] = await store().jobEventList({ afterId: headId, limit: 10 });
    expect(next).toMatchObject({ jobId: job.id, type: "job.queued" });
    expect(next!.id).toBeGreaterThan(headId);
  });

  test("pruning takes the oldest events appended before the cutoff, at most limit at a time, and moves the floor", async () => {
    const q = await kit.makeQueue();
    const { floorId: floor0 } = await store().jobEventBounds();
    const old1 = (await kit.submit(q, { createdAtMs: T0 })).job;
    const old2 = (await kit.submit(q, { createdAtMs: T0 + 1_000 })).job;
    const fresh = (await kit.submit(q, { createdAtMs: T0 + 60_000 })).job;
    const ids = (await store().jobEventList({ afterId: floor0, limit: 100 })).filter((e) => [old1.id, old2.id, fresh.id].includes(e.jobId)).map((e) => e.id);
    expect(await store().jobEventPrune({ beforeAtMs: T0 + 30_000, limit: 1 })).toBe(1);
    expect((await store().jobEventBounds()).floorId).toBe(ids[0]);
    expect(await store().jobEventPrune({ beforeAtMs: T0 + 30_000, limit: 100 })).toBe(1);
    expect((await store().jobEventBounds()).floorId).toBe(ids[1]);
    expect(await store().jobEventPrune({ beforeAtMs: T0 + 30_000, limit: 100 })).toBe(0);
    expect((await store().jobEventList({ afterId: 0, limit: 100 })).map((e) => e.jobId)).toEqual([fresh.id]);
  });

  test("an event of a job since pruned still reads, with input null", async () => {
    const q = await kit.makeQueue();
    const before = (await store().jobEventBounds()).headId;
    const { job } = await kit.submit(q);
    await act(store(), { kind: "cancel", id: job.id, nowMs: T0, resultTtlSeconds: 60 });
    await store().jobPrune({ nowMs: T0 + 61_000, limit: 100 });
    expect(await store().jobGet({ id: job.id })).toBeUndefined();
    const events = await store().jobEventList({ afterId: before, limit: 10 });
    expect(summary(events)).toEqual([
      [job.id, "job.queued", "queued"],
      [job.id, "job.canceled", "canceled"],
    ]);
    expect(events[1]!.job.inputJson).toBe("null");
  });

  test("two handles: events written through one are read through the other, in id order", async () => {
    const q = await kit.makeQueue();
    const other = await another();
    const before = (await other.jobEventBounds()).headId;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await kit.submit(q)).job.id);
    const seen = await other.jobEventList({ afterId: before, limit: 100 });
    expect(seen.map((e) => e.jobId)).toEqual(ids);
    expect((await other.jobEventBounds()).headId).toBe(seen[4]!.id);
  });

  test("two handles appending in turn: each event gets a new id, above every id before it", async () => {
    const q = await kit.makeQueue();
    const other = await another();
    const otherKit = jobCaseKit(() => other);
    const before = (await store().jobEventBounds()).headId;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await kit.submit(q)).job.id);
      ids.push((await otherKit.submit(q)).job.id);
    }
    const seen = await store().jobEventList({ afterId: before, limit: 100 });
    expect(seen.map((e) => e.jobId)).toEqual(ids);
    const eventIds = seen.map((e) => e.id);
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
    expect(new Set(eventIds).size).toBe(eventIds.length);
  });
}
