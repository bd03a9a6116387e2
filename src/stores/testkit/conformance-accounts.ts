/**
 * Conformance cases for accounts: a queue name is unique within its account, each account lists
 * and finds only its own queues, tombstones and move tasks are per account, and a dead-letter
 * queue redrives to the source of that name in its own account; a job keeps its account (an
 * adopted message's job too), the event log lists one account's events, and a schedule's name is
 * unique within its account. "" (the default) is the server's own account.
 */
import { expect } from "vitest";
import { defaultQueueConfig } from "../../core/queue.js";
import type { ScheduleRecord } from "../../core/schedules/schedule.js";
import { type ConformanceContext, T0, newMessage } from "./conformance-context.js";
import { jobCaseKit } from "./conformance-jobs-kit.js";
import { messageReceive, messageSend } from "./one-call.js";

const other = "222222222222";

export function registerAccountCases({ store, reopen, test }: ConformanceContext): void {
  const config = defaultQueueConfig(false);

  test("accounts: the same name in two accounts is two queues; each account gets and lists its own", async () => {
    const own = await store().queueCreate({ name: "orders", config, tags: { who: "own" }, nowMs: T0 });
    const theirs = await store().queueCreate({ account: other, name: "orders", config, tags: { who: "theirs" }, nowMs: T0 });
    expect(theirs.created).toBe(true);
    expect(theirs.queue.id).not.toBe(own.queue.id);
    expect(own.queue.account).toBe("");
    expect(theirs.queue).toMatchObject({ account: other, name: "orders", tags: { who: "theirs" } });
    await store().queueCreate({ account: other, name: "only-theirs", config, tags: {}, nowMs: T0 });
    expect((await store().queueGet({ name: "orders" }))!.id).toBe(own.queue.id);
    expect((await store().queueGet({ account: "", name: "orders" }))!.id).toBe(own.queue.id);
    expect((await store().queueGet({ account: other, name: "orders" }))!.id).toBe(theirs.queue.id);
    expect(await store().queueGet({ name: "only-theirs" })).toBeUndefined();
    expect(await store().queueGet({ account: "333333333333", name: "orders" })).toBeUndefined();
    expect((await store().queueList({ limit: 10 })).map((q) => q.name)).toEqual(["orders"]);
    expect((await store().queueList({ account: other, limit: 10 })).map((q) => `${q.account}:${q.name}`)).toEqual([`${other}:only-theirs`, `${other}:orders`]);
    expect((await store().queueList({ account: other, prefix: "o", afterName: "only-theirs", limit: 10 })).map((q) => q.name)).toEqual(["orders"]);
    expect(await store().queueAccounts()).toEqual(["", other]);
    const again = await store().queueCreate({ account: other, name: "orders", config, tags: {}, nowMs: T0 + 1 });
    expect(again).toMatchObject({ created: false, queue: { id: theirs.queue.id, tags: { who: "theirs" } } });
    const reopened = await reopen();
    expect((await reopened.queueGet({ account: other, name: "orders" }))!.tags).toEqual({ who: "theirs" });
  });

  test("accounts: a deleted queue's tombstone is its account's; the other account's queue stays", async () => {
    const own = await store().queueCreate({ name: "q", config, tags: {}, nowMs: T0 });
    const theirs = await store().queueCreate({ account: other, name: "q", config, tags: {}, nowMs: T0 });
    await messageSend(store(), { queueId: own.queue.id, messages: [newMessage({ body: "own" })] });
    await messageSend(store(), { queueId: theirs.queue.id, messages: [newMessage({ body: "theirs" })] });
    await store().queueDelete({ id: theirs.queue.id, nowMs: T0 + 5 });
    expect(await store().queueDeletedAt({ account: other, name: "q" })).toBe(T0 + 5);
    expect(await store().queueDeletedAt({ name: "q" })).toBeUndefined();
    expect(await store().queueGet({ account: other, name: "q" })).toBeUndefined();
    expect((await store().queueStats({ queueId: own.queue.id, nowMs: T0, minSentAtMs: 0 })).visible).toBe(1);
    expect(await store().queueAccounts()).toEqual([""]);
  });

  test("accounts: a dead-letter queue redrives each message to the source of that name in its own account", async () => {
    const ownSource = await store().queueCreate({ name: "src", config, tags: {}, nowMs: T0 });
    const theirSource = await store().queueCreate({ account: other, name: "src", config, tags: {}, nowMs: T0 });
    const theirDlq = await store().queueCreate({ account: other, name: "dlq", config, tags: {}, nowMs: T0 });
    await messageSend(store(), { queueId: theirSource.queue.id, messages: [newMessage({ body: "poison" })] });
    const deadLetter = { queueId: theirDlq.queue.id, maxReceiveCount: 0, sourceQueueName: "src" };
    const r = await messageReceive(store(), { queueId: theirSource.queue.id, max: 10, nowMs: T0, visibleUntilMs: T0 + 1, minSentAtMs: 0, receiptToken: "tok-acct-0", deadLetter });
    expect(r.deadLetteredCount).toBe(1);
    const moved = await store().messageMove({ sourceQueueId: theirDlq.queue.id, max: 10, nowMs: T0 + 10, minSentAtMs: 0 });
    expect(moved).toMatchObject({ moved: 1, movedByQueueId: { [theirSource.queue.id]: 1 }, sourceUnresolved: false });
    expect((await store().queueStats({ queueId: ownSource.queue.id, nowMs: T0 + 10, minSentAtMs: 0 })).visible).toBe(0);
    const back = await messageReceive(store(), { queueId: theirSource.queue.id, max: 10, nowMs: T0 + 10, visibleUntilMs: T0 + 100, minSentAtMs: 0, receiptToken: "tok-acct-1" });
    expect(back.messages.map((m) => m.body)).toEqual(["poison"]);
  });

  test("accounts: move tasks are per account: one active task per source in each, listed by the account's source", async () => {
    const task = (taskHandle: string, account?: string) => ({
      taskHandle,
      ...(account === undefined ? {} : { account }),
      sourceQueueName: "dlq",
      status: "RUNNING" as const,
      movedCount: 0,
      toMoveCount: 1,
      startedAtMs: T0,
      updatedAtMs: T0,
    });
    expect(await store().moveTaskCreate({ task: task("own-1") })).toEqual({ created: true });
    expect(await store().moveTaskCreate({ task: task("theirs-1", other) })).toEqual({ created: true });
    expect(await store().moveTaskCreate({ task: task("theirs-2", other) })).toEqual({ created: false });
    expect(await store().moveTaskCreate({ task: task("own-2") })).toEqual({ created: false });
    expect((await store().moveTaskList({ sourceQueueName: "dlq", limit: 10 })).map((t) => t.taskHandle)).toEqual(["own-1"]);
    expect((await store().moveTaskList({ account: other, sourceQueueName: "dlq", limit: 10 })).map((t) => t.taskHandle)).toEqual(["theirs-1"]);
    expect((await store().moveTaskList({ activeOnly: true, limit: 10 })).map((t) => t.taskHandle).sort()).toEqual(["own-1", "theirs-1"]);
    expect(await store().moveTaskGet({ taskHandle: "theirs-1" })).toMatchObject({ account: other, sourceQueueName: "dlq" });
    expect((await store().moveTaskGet({ taskHandle: "own-1" }))!.account).toBeUndefined();
  });

  test("accounts: a job keeps its account through writes and reads, an adopted message's job too", async () => {
    const jobs = jobCaseKit(store);
    const theirs = (await store().queueCreate({ account: other, name: "jobs", config, tags: {}, nowMs: T0 })).queue;
    const own = (await store().queueCreate({ name: "jobs", config, tags: {}, nowMs: T0 })).queue;
    const submitted = await jobs.submit(theirs, { account: other });
    const ownJob = await jobs.submit(own);
    expect(submitted.job.account).toBe(other);
    expect((await store().jobGet({ id: submitted.job.id }))!.account).toBe(other);
    expect((await store().jobGet({ id: ownJob.job.id }))!.account).toBeUndefined();
    await messageSend(store(), { queueId: theirs.id, messages: [newMessage({ body: '{"sent":"through SQS"}' })] });
    const leased = await store().jobLease({ ...jobs.leaseParams(theirs, `${theirs.id}.lease-acct`), leaseSeconds: 1, adopt: { maxAttempts: 3, account: other } });
    expect(leased.leased).toHaveLength(2);
    for (const job of leased.leased) expect((await store().jobGet({ id: job.id }))!.account).toBe(other);
    const expired = await store().jobListExpired({ nowMs: T0 + 5_000, limit: 10 });
    expect(expired.map((e) => e.account)).toEqual([other, other]);
  });

  test("accounts: the event log keeps each event's account and lists one account's when asked", async () => {
    const jobs = jobCaseKit(store);
    const theirs = (await store().queueCreate({ account: other, name: "events", config, tags: {}, nowMs: T0 })).queue;
    const own = (await store().queueCreate({ name: "events", config, tags: {}, nowMs: T0 })).queue;
    const theirJob = (await jobs.submit(theirs, { account: other })).job.id;
    const ownJob = (await jobs.submit(own)).job.id;
    const list = async (p: { account?: string; queueName?: string }): Promise<string[]> => (await store().jobEventList({ afterId: 0, limit: 100, ...p })).map((e) => e.jobId);
    expect(await list({})).toEqual([theirJob, ownJob]);
    expect(await list({ account: other })).toEqual([theirJob]);
    expect(await list({ account: "" })).toEqual([ownJob]);
    expect(await list({ account: other, queueName: "events" })).toEqual([theirJob]);
    expect(await list({ queueName: "events" })).toEqual([theirJob, ownJob]);
    expect((await store().jobEventList({ afterId: 0, limit: 100, account: other }))[0]!.job.account).toBe(other);
  });

  test("accounts: a schedule's name is unique within its account; each account gets, lists and deletes its own", async () => {
    const schedule = (account: string | undefined, inputJson: string): ScheduleRecord => ({
      ...(account === undefined ? {} : { account }),
      name: "nightly",
      queueName: "jobs",
      everySeconds: 60,
      timezone: "UTC",
      inputJson,
      optionsJson: "{}",
      catchUp: "latest",
      paused: false,
      nextRunAtMs: T0,
      createdAtMs: T0,
      updatedAtMs: T0,
      version: 1,
    });
    expect(await store().scheduleWrite({ schedule: schedule(undefined, '"own"') })).toEqual({ written: true });
    expect(await store().scheduleWrite({ schedule: schedule(other, '"theirs"') })).toEqual({ written: true });
    expect((await store().scheduleGet({ name: "nightly" }))!.inputJson).toBe('"own"');
    expect((await store().scheduleGet({ account: other, name: "nightly" }))!.inputJson).toBe('"theirs"');
    expect(await store().scheduleGet({ account: "333333333333", name: "nightly" })).toBeUndefined();
    expect((await store().scheduleList({ account: other, limit: 10 })).map((s) => s.inputJson)).toEqual(['"theirs"']);
    expect(await store().scheduleWrite({ schedule: { ...schedule(other, '"again"'), version: 2 }, expectedVersion: 1 })).toEqual({ written: true });
    expect((await store().scheduleGet({ name: "nightly" }))!.version).toBe(1);
    expect((await store().scheduleListDue({ nowMs: T0, limit: 10 })).map((s) => s.account ?? "").sort()).toEqual(["", other]);
    expect(await store().scheduleDelete({ account: other, name: "nightly" })).toBe(true);
    expect(await store().scheduleGet({ account: other, name: "nightly" })).toBeUndefined();
    expect(await store().scheduleGet({ name: "nightly" })).toBeDefined();
  });
}
