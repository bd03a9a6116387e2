/**
 * Conformance cases for schedules (core/schedules/schedule-store.ts): every write a
 * compare-and-set on the record's version, and a fire — the schedule moved to its next run, the
 * run's jobs created and the last one named in the record — one transaction, won by exactly one of two handles racing for it.
 */
import { expect } from "vitest";
import type { JobCreateItem } from "../../core/job-store.js";
import type { QueueRecord } from "../../core/queue.js";
import type { ScheduleRecord } from "../../core/schedules/schedule.js";
import type { Store } from "../../core/store.js";
import type { ConformanceContext } from "./conformance-context.js";
import { T0 } from "./conformance-context.js";
import { expectCode, jobCaseKit, newJobFor } from "./conformance-jobs-kit.js";

function schedule(name: string, overrides: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    name,
    queueName: "jobs",
    cron: "0 * * * *",
    timezone: "UTC",
    inputJson: '{"report":"hourly"}',
    optionsJson: "{}",
    catchUp: "latest",
    paused: false,
    nextRunAtMs: T0 + 3_600_000,
    createdAtMs: T0,
    updatedAtMs: T0,
    version: 1,
    ...overrides,
  };
}

/** A run's job, keyed by schedule and run time as core keys it. */
function runItem(queue: QueueRecord, name: string, runAtMs: number): JobCreateItem {
  const { job, message } = newJobFor(queue, { idempotencyKey: `schedule:${name}:${runAtMs}` });
  return { job, message, idempotency: { key: `schedule:${name}:${runAtMs}`, fingerprint: "run", expiresAtMs: T0 + 86_400_000 } };
}

async function jobsOf(store: Store, queue: QueueRecord): Promise<string[]> {
  return (await store.jobList({ queueId: queue.id, limit: 100 })).map((j) => j.idempotencyKey ?? "").sort();
}

export function registerScheduleCases({ store, reopen, another, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);

  test("scheduleWrite creates once, then replaces only at the expected version", async () => {
    expect(await store().scheduleWrite({ schedule: schedule("s") })).toEqual({ written: true });
    const again = await store().scheduleWrite({ schedule: schedule("s", { inputJson: "2" }) });
    expect(again).toEqual({ written: false, current: schedule("s") });
    expect(await store().scheduleWrite({ schedule: schedule("s", { version: 2, paused: true, nextRunAtMs: undefined }), expectedVersion: 1 })).toEqual({ written: true });
    const stale = await store().scheduleWrite({ schedule: schedule("s", { version: 2, inputJson: "3" }), expectedVersion: 1 });
    expect(stale.written).toBe(false);
    expect(stale.written === false && stale.current).toEqual(schedule("s", { version: 2, paused: true, nextRunAtMs: undefined }));
    expect(await store().scheduleWrite({ schedule: schedule("gone", { version: 2 }), expectedVersion: 1 })).toEqual({ written: false });
    expect(await store().scheduleGet({ name: "s" })).toEqual(schedule("s", { version: 2, paused: true, nextRunAtMs: undefined }));
    expect(await store().scheduleGet({ name: "gone" })).toBeUndefined();
  });

  test("schedules list by name a page at a time, and delete", async () => {
    for (const n of ["c", "a", "b"]) await store().scheduleWrite({ schedule: schedule(n) });
    expect((await store().scheduleList({ limit: 2 })).map((s) => s.name)).toEqual(["a", "b"]);
    expect((await store().scheduleList({ afterName: "b", limit: 2 })).map((s) => s.name)).toEqual(["c"]);
    expect(await store().scheduleDelete({ name: "b" })).toBe(true);
    expect(await store().scheduleDelete({ name: "b" })).toBe(false);
    expect((await store().scheduleList({ limit: 10 })).map((s) => s.name)).toEqual(["a", "c"]);
  });

  test("due schedules come earliest first; paused ones (no next run) never", async () => {
    await store().scheduleWrite({ schedule: schedule("late", { nextRunAtMs: T0 + 20 }) });
    await store().scheduleWrite({ schedule: schedule("early", { nextRunAtMs: T0 + 10 }) });
    await store().scheduleWrite({ schedule: schedule("paused", { paused: true, nextRunAtMs: undefined }) });
    await store().scheduleWrite({ schedule: schedule("future", { nextRunAtMs: T0 + 99 }) });
    expect((await store().scheduleListDue({ nowMs: T0 + 20, limit: 10 })).map((s) => s.name)).toEqual(["early", "late"]);
    expect((await store().scheduleListDue({ nowMs: T0 + 20, limit: 1 })).map((s) => s.name)).toEqual(["early"]);
    expect(await store().scheduleNextDueAt()).toBe(T0 + 10);
  });

  test("a fire moves the schedule and creates its runs' jobs together; a stale one writes nothing", async () => {
    const q = await kit.makeQueue();
    await store().scheduleWrite({ schedule: schedule("s") });
    const next = schedule("s", { version: 2, nextRunAtMs: T0 + 7_200_000, lastRunAtMs: T0 + 3_600_000 });
    const fired = await store().scheduleFire({ schedule: next, expectedVersion: 1, items: [runItem(q, "s", 1), runItem(q, "s", 2)], nowMs: T0 + 3_600_000 });
    expect(fired.fired && fired.results.map((r) => r.created && r.job.status)).toEqual(["queued", "queued"]);
    // The record names the last run's job.
    expect(await store().scheduleGet({ name: "s" })).toEqual({ ...next, lastJobId: fired.fired && fired.results[1]!.job.id });
    const stale = await store().scheduleFire({ schedule: schedule("s", { version: 2 }), expectedVersion: 1, items: [runItem(q, "s", 3)], nowMs: T0 + 3_600_000 });
    expect(stale).toEqual({ fired: false });
    expect(await jobsOf(store(), q)).toEqual(["schedule:s:1", "schedule:s:2"]);
    // The jobs are leasable like any submit's.
    expect((await kit.lease(q, { nowMs: T0 + 3_600_000 })).leased).toHaveLength(2);
  });

  test("a fire whose run was created already finds that job, and one whose queue is gone writes nothing", async () => {
    const q = await kit.makeQueue();
    await store().scheduleWrite({ schedule: schedule("s") });
    const first = await store().scheduleFire({ schedule: schedule("s", { version: 2 }), expectedVersion: 1, items: [runItem(q, "s", 1)], nowMs: T0 });
    const again = await store().scheduleFire({ schedule: schedule("s", { version: 3 }), expectedVersion: 2, items: [runItem(q, "s", 1)], nowMs: T0 });
    expect(first.fired && again.fired && again.results[0]!.created === false && again.results[0]!.job.id === (first.results[0]!.created && first.results[0]!.job.id)).toBe(true);
    // lastJobId is the job the run's key names, not the item's unused new id.
    const firstJobId = first.fired ? first.results[0]!.job.id : "";
    expect((await store().scheduleGet({ name: "s" }))!.lastJobId).toBe(firstJobId);
    // A fire with no run (catchUp none) keeps the last job.
    expect((await store().scheduleFire({ schedule: { ...schedule("s", { version: 4 }), lastJobId: firstJobId }, expectedVersion: 3, items: [], nowMs: T0 })).fired).toBe(true);
    expect((await store().scheduleGet({ name: "s" }))!.lastJobId).toBe(firstJobId);
    await store().queueDelete({ id: q.id, nowMs: T0 });
    await expectCode(store().scheduleFire({ schedule: schedule("s", { version: 5 }), expectedVersion: 4, items: [runItem(q, "s", 2)], nowMs: T0 }), "QueueNotFound");
    expect(await store().scheduleGet({ name: "s" })).toMatchObject({ version: 4, lastJobId: firstJobId });
  });

  test("schedules and their fires outlive a reopen", async () => {
    const q = await kit.makeQueue();
    await store().scheduleWrite({ schedule: schedule("s") });
    const fired = await store().scheduleFire({ schedule: schedule("s", { version: 2, lastRunAtMs: T0 }), expectedVersion: 1, items: [runItem(q, "s", 1)], nowMs: T0 });
    const reopened = await reopen();
    expect(await reopened.scheduleGet({ name: "s" })).toEqual(schedule("s", { version: 2, lastRunAtMs: T0, lastJobId: fired.fired ? fired.results[0]!.job.id : "" }));
    expect(await jobsOf(reopened, (await reopened.queueGet({ name: q.name }))!)).toEqual(["schedule:s:1"]);
  });

  test("two handles firing the same run at once: exactly one wins, and its jobs are the only ones", async () => {
    const q = await kit.makeQueue();
    await store().scheduleWrite({ schedule: schedule("s") });
    const other = await another();
    const next = schedule("s", { version: 2, nextRunAtMs: T0 + 7_200_000 });
    const results = await Promise.all([
      store().scheduleFire({ schedule: next, expectedVersion: 1, items: [runItem(q, "s", 1)], nowMs: T0 }),
      other.scheduleFire({ schedule: next, expectedVersion: 1, items: [runItem(q, "s", 1)], nowMs: T0 }),
    ]);
    expect(results.filter((r) => r.fired)).toHaveLength(1);
    expect(await jobsOf(other, q)).toEqual(["schedule:s:1"]);
  });
}
