/** Conformance cases for message move tasks: task rows, one active task per source, batch moves. */
import { expect } from "vitest";
import type { MoveTaskRecord } from "../../core/move-task-record.js";
import { defaultQueueConfig } from "../../core/queue.js";
import { type ConformanceContext, newMessage } from "./conformance-context.js";
import { messageReceive, messageSend } from "./one-call.js";

const T0 = 1_700_000_000_000;

function task(overrides: Partial<MoveTaskRecord> = {}): MoveTaskRecord {
  return {
    taskHandle: "task-1",
    sourceQueueName: "dlq",
    status: "RUNNING",
    movedCount: 0,
    toMoveCount: 3,
    startedAtMs: T0,
    updatedAtMs: T0,
    ...overrides,
  };
}

export function registerMoveTaskCases({ store, reopen, test }: ConformanceContext): void {
  async function makeQueue(name: string): Promise<number> {
    const { queue } = await store().queueCreate({ name, config: defaultQueueConfig(false), tags: {}, nowMs: T0 });
    return queue.id;
  }

  /** Puts messages into `dlq` as if dead-lettered from `source` (through a real receive). */
  async function deadLetter(sourceName: string, sourceId: number, dlqId: number, bodies: string[]): Promise<void> {
    await messageSend(store(), { queueId: sourceId, messages: bodies.map((body) => newMessage({ body })) });
    const deadLetter = { queueId: dlqId, maxReceiveCount: 0, sourceQueueName: sourceName };
    const r = await messageReceive(store(), { queueId: sourceId, max: 10, nowMs: T0, visibleUntilMs: T0 + 1, minSentAtMs: 0, receiptToken: "tok-move-0", deadLetter });
    expect(r.deadLetteredCount).toBe(bodies.length);
  }

  test("moveTask: one active task per source; list is newest first; updates are conditional", async () => {
    expect(await store().moveTaskCreate({ task: task() })).toEqual({ created: true });
    expect(await store().moveTaskCreate({ task: task({ taskHandle: "task-2" }) })).toEqual({ created: false });
    expect(await store().moveTaskCreate({ task: task({ taskHandle: "task-3", sourceQueueName: "other" }) })).toEqual({ created: true });
    expect(await store().moveTaskUpdate({ taskHandle: "task-1", status: "CANCELLED", fromStatuses: ["CANCELLING"], nowMs: T0 + 1 })).toBe(false);
    expect(await store().moveTaskUpdate({ taskHandle: "task-1", status: "FAILED", failureReason: "why", fromStatuses: ["RUNNING"], nowMs: T0 + 2 })).toBe(true);
    expect(await store().moveTaskCreate({ task: task({ taskHandle: "task-4", startedAtMs: T0 + 3 }) })).toEqual({ created: true });
    expect((await store().moveTaskList({ sourceQueueName: "dlq", limit: 10 })).map((t) => t.taskHandle)).toEqual(["task-4", "task-1"]);
    expect((await store().moveTaskList({ activeOnly: true, limit: 10 })).map((t) => t.taskHandle).sort()).toEqual(["task-3", "task-4"]);
    const failed = (await store().moveTaskGet({ taskHandle: "task-1" }))!;
    expect(failed).toMatchObject({ status: "FAILED", failureReason: "why", updatedAtMs: T0 + 2, toMoveCount: 3 });
    expect(await store().moveTaskGet({ taskHandle: "nope" })).toBeUndefined();
  });

  test("messageMove: moves a batch to a destination as new enqueues and counts it on the task", async () => {
    const src = await makeQueue("src");
    const dlq = await makeQueue("dlq");
    const dest = await makeQueue("dest");
    await deadLetter("src", src, dlq, ["m1", "m2", "m3"]);
    await store().moveTaskCreate({ task: task() });
    const first = await store().messageMove({ sourceQueueId: dlq, destinationQueueId: dest, max: 2, nowMs: T0 + 10, minSentAtMs: 0, taskHandle: "task-1" });
    expect(first).toEqual({ moved: 2, movedByQueueId: { [dest]: 2 }, sourceUnresolved: false, sourceGone: false, destinationGone: false, taskNotRunning: false });
    expect((await store().moveTaskGet({ taskHandle: "task-1" }))!.movedCount).toBe(2);
    const got = (await messageReceive(store(), { queueId: dest, max: 10, nowMs: T0 + 10, visibleUntilMs: T0 + 100, minSentAtMs: 0, receiptToken: "tok-move-1" })).messages;
    expect(got.map((m) => m.body).sort()).toEqual(["m1", "m2"]);
    expect(got.every((m) => m.receiveCount === 1 && m.sentAtMs === T0 + 10 && m.deadLetterSourceQueueName === undefined)).toBe(true);
    await store().moveTaskUpdate({ taskHandle: "task-1", status: "CANCELLING", fromStatuses: ["RUNNING"], nowMs: T0 + 11 });
    const stopped = await store().messageMove({ sourceQueueId: dlq, destinationQueueId: dest, max: 2, nowMs: T0 + 12, minSentAtMs: 0, taskHandle: "task-1" });
    expect(stopped).toMatchObject({ moved: 0, taskNotRunning: true });
  });

  test("messageMove: without a destination each message goes back to its source queue", async () => {
    const a = await makeQueue("a");
    const b = await makeQueue("b");
    const dlq = await makeQueue("dlq");
    await deadLetter("a", a, dlq, ["from-a"]);
    await deadLetter("b", b, dlq, ["from-b"]);
    const r = await store().messageMove({ sourceQueueId: dlq, max: 10, nowMs: T0 + 5, minSentAtMs: 0 });
    expect(r).toEqual({ moved: 2, movedByQueueId: { [a]: 1, [b]: 1 }, sourceUnresolved: false, sourceGone: false, destinationGone: false, taskNotRunning: false });
    const fromA = (await messageReceive(store(), { queueId: a, max: 10, nowMs: T0 + 5, visibleUntilMs: T0 + 50, minSentAtMs: 0, receiptToken: "tok-move-2" })).messages;
    expect(fromA.map((m) => m.body)).toEqual(["from-a"]);
  });

  test("messageMove: stops at a message whose source queue is gone", async () => {
    const a = await makeQueue("a");
    const dlq = await makeQueue("dlq");
    await deadLetter("a", a, dlq, ["orphan"]);
    await store().queueDelete({ id: a, nowMs: T0 + 1 });
    const r = await store().messageMove({ sourceQueueId: dlq, max: 10, nowMs: T0 + 5, minSentAtMs: 0 });
    expect(r).toMatchObject({ moved: 0, sourceUnresolved: true });
  });

  test("messageMove: a destination deleted since it was read gets nothing (destinationGone), standard or FIFO", async () => {
    for (const fifo of [false, true]) {
      const suffix = fifo ? ".fifo" : "";
      const { queue: src } = await store().queueCreate({ name: `src${suffix}`, config: defaultQueueConfig(fifo), tags: {}, nowMs: T0 });
      const { queue: dest } = await store().queueCreate({ name: `dest${suffix}`, config: defaultQueueConfig(fifo), tags: {}, nowMs: T0 });
      await messageSend(store(), { queueId: src.id, messages: [newMessage({ body: "stays", ...(fifo ? { groupId: "g" } : {}) })] });
      const handle = `task${suffix}`;
      await store().moveTaskCreate({ task: task({ taskHandle: handle, sourceQueueName: src.name, destinationQueueName: dest.name }) });
      await store().queueDelete({ id: dest.id, nowMs: T0 });
      const r = await store().messageMove({ sourceQueueId: src.id, destinationQueueId: dest.id, max: 10, nowMs: T0 + 5, minSentAtMs: 0, taskHandle: handle });
      expect(r).toEqual({ moved: 0, movedByQueueId: {}, sourceUnresolved: false, sourceGone: false, destinationGone: true, taskNotRunning: false });
      expect((await store().moveTaskGet({ taskHandle: handle }))!.movedCount).toBe(0);
      expect((await store().queueStats({ queueId: src.id, nowMs: T0 + 5, minSentAtMs: 0 })).visible).toBe(1);
    }
  });

  test("messageMove: a source deleted since it was read moves nothing and says so (sourceGone), to a destination or back to each message's source", async () => {
    for (const destination of [true, false]) {
      const suffix = destination ? "-to-dest" : "-back";
      const src = await makeQueue(`src${suffix}`);
      const dlq = await makeQueue(`dlq${suffix}`);
      const dest = await makeQueue(`dest${suffix}`);
      await deadLetter(`src${suffix}`, src, dlq, ["m1", "m2"]);
      const handle = `task${suffix}`;
      await store().moveTaskCreate({ task: task({ taskHandle: handle, sourceQueueName: `dlq${suffix}`, destinationQueueName: destination ? `dest${suffix}` : undefined }) });
      await store().queueDelete({ id: dlq, nowMs: T0 });
      const r = await store().messageMove({ sourceQueueId: dlq, destinationQueueId: destination ? dest : undefined, max: 10, nowMs: T0 + 5, minSentAtMs: 0, taskHandle: handle });
      expect(r).toEqual({ moved: 0, movedByQueueId: {}, sourceUnresolved: false, sourceGone: true, destinationGone: false, taskNotRunning: false });
      expect((await store().moveTaskGet({ taskHandle: handle }))!.movedCount).toBe(0);
    }
  });

  test("moveTask: tasks and their progress survive close and reopen", async () => {
    await store().moveTaskCreate({ task: task({ movedCount: 0 }) });
    await reopen();
    expect((await store().moveTaskList({ activeOnly: true, limit: 10 })).map((t) => t.taskHandle)).toEqual(["task-1"]);
  });
}
