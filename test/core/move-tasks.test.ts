import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { SluiceError } from "../../src/core/errors.js";
import type { IdSource } from "../../src/core/ids.js";
import type { QueueConfig, QueueRecord } from "../../src/core/queue.js";
import { QueueService } from "../../src/core/queue-service.js";
import { type SqliteStore, openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";

/** A service on a SQLite file that can be "restarted" (new store and service, same file and clock). */
class Node {
  store!: SqliteStore;
  service!: QueueService;
  private generation = 0;
  constructor(
    readonly filename: string,
    readonly clock: ManualClock,
  ) {
    this.open();
  }
  open(): void {
    this.generation++;
    let n = 0;
    const prefix = String(this.generation).padStart(4, "0");
    const ids: IdSource = {
      messageId: () => `00000000-${prefix}-4000-8000-${String(++n).padStart(12, "0")}`,
      receiptToken: () => `token${prefix}${String(++n).padStart(8, "0")}`,
    };
    this.store = openSqliteStore({ filename: this.filename });
    this.service = new QueueService({ store: this.store, clock: this.clock, ids, senderId: "000000000000" });
  }
  async close(): Promise<void> {
    await this.service.moveTasks.runner.stop();
    this.service.waiters.closeAll();
    await this.store.close();
  }
  async restart(): Promise<void> {
    await this.close();
    this.open();
    await this.service.moveTasks.runner.start();
  }
}

let dir: string;
let node: Node;
let clock: ManualClock;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sluice-move-"));
  clock = new ManualClock();
  node = new Node(join(dir, "sluice.db"), clock);
});
afterEach(async () => {
  await node.close();
  rmSync(dir, { recursive: true, force: true });
});


async function errorOf(p: Promise<unknown>): Promise<SluiceError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SluiceError) return err;
    throw err;
  }
  throw new Error("expected an error");
}

/** A source queue with a DLQ holding `count` dead-lettered messages. */
async function deadLettered(count: number, source = "src", config: Partial<QueueConfig> = {}): Promise<{ src: QueueRecord; dlq: QueueRecord }> {
  const s = node.service;
  const dlq = (await s.getQueue("", "dlq").catch(() => undefined)) ?? (await s.createQueue("", { name: "dlq" })).queue;
  const { queue: src } = await s.createQueue("", { name: source, config: { visibilityTimeoutSeconds: 0, redrivePolicy: { deadLetterQueueName: "dlq", maxReceiveCount: 1 }, ...config } });
  await Promise.all(Array.from({ length: Math.ceil(count / 10) }, (_, b) => s.sendMessages(src, Array.from({ length: Math.min(10, count - b * 10) }, (_, i) => ({ body: `${source}-${b * 10 + i}` })))));
  // First receive delivers (count 1, visibility 0); the next moves everything to the DLQ.
  while ((await s.queueStats(src)).visible > 0) {
    await s.receiveMessages(src, { maxMessages: 10 });
  }
  return { src, dlq };
}

async function bodiesIn(queue: QueueRecord): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const got = await node.service.receiveMessages(queue, { maxMessages: 10, visibilityTimeoutSeconds: 600 });
    if (got.length === 0) return out.sort();
    out.push(...got.map((m) => m.body));
  }
}

describe("StartMessageMoveTask", () => {
  it("validates source, destination and rate, and allows one active task per source", async () => {
    const s = node.service;
    await s.createQueue("", { name: "plain" });
    expect((await errorOf(s.moveTasks.start("", { sourceQueueName: "nope" }))).code).toBe("ResourceNotFound");
    expect((await errorOf(s.moveTasks.start("", { sourceQueueName: "plain" }))).code).toBe("InvalidParameterValue");
    await deadLettered(3);
    await s.createQueue("", { name: "f.fifo", config: { fifoQueue: true } });
    expect((await errorOf(s.moveTasks.start("", { sourceQueueName: "dlq", destinationQueueName: "nope" }))).code).toBe("ResourceNotFound");
    expect((await errorOf(s.moveTasks.start("", { sourceQueueName: "dlq", destinationQueueName: "f.fifo" }))).code).toBe("InvalidParameterValue");
    expect((await errorOf(s.moveTasks.start("", { sourceQueueName: "dlq", maxMessagesPerSecond: 501 }))).code).toBe("InvalidParameterValue");
    const task = await s.moveTasks.start("", { sourceQueueName: "dlq", maxMessagesPerSecond: 1 });
    expect(task).toMatchObject({ status: "RUNNING", toMoveCount: 3, movedCount: 0 });
    // A second active task (on the SQS wire, InvalidParameterValue: SQS's recorded answer).
    expect((await errorOf(s.moveTasks.start("", { sourceQueueName: "dlq" }))).code).toBe("RedriveInProgress");
  });

  it("moves every message back to the queue it came from, in batches, then completes", async () => {
    const { src: a, dlq } = await deadLettered(1_500, "a");
    const { src: b } = await deadLettered(20, "b");
    const task = await node.service.moveTasks.start("", { sourceQueueName: "dlq" });
    await node.service.moveTasks.runner.idle();
    const [done] = await node.service.moveTasks.list("", "dlq");
    expect(done).toMatchObject({ taskHandle: task.taskHandle, status: "COMPLETED", movedCount: 1_520, toMoveCount: 1_520 });
    expect((await node.service.queueStats(dlq)).visible).toBe(0);
    expect((await bodiesIn(b)).length).toBe(20);
    const fromA = await node.service.receiveMessages(a, { maxMessages: 1 });
    expect(fromA[0]!.receiveCount).toBe(1);
    expect(fromA[0]!.deadLetterSourceQueueName).toBeUndefined();
  });

  it("moves to an explicit destination at the requested rate, on the clock", async () => {
    const { dlq } = await deadLettered(25);
    const { queue: dest } = await node.service.createQueue("", { name: "dest" });
    await node.service.moveTasks.start("", { sourceQueueName: "dlq", destinationQueueName: "dest", maxMessagesPerSecond: 10 });
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq"))[0]).toMatchObject({ status: "RUNNING", movedCount: 10 });
    clock.advance(1_000);
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq"))[0]!.movedCount).toBe(20);
    clock.advance(1_000);
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq"))[0]).toMatchObject({ status: "COMPLETED", movedCount: 25 });
    expect((await node.service.queueStats(dlq)).visible).toBe(0);
    expect((await bodiesIn(dest)).length).toBe(25);
  });

  it("cancels a running task", async () => {
    await deadLettered(30);
    const task = await node.service.moveTasks.start("", { sourceQueueName: "dlq", maxMessagesPerSecond: 10 });
    await node.service.moveTasks.runner.idle();
    const cancelling = await node.service.moveTasks.cancel("", task.taskHandle);
    expect(["CANCELLING", "CANCELLED"]).toContain(cancelling.status);
    await node.service.moveTasks.runner.idle();
    clock.advance(5_000);
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq"))[0]).toMatchObject({ status: "CANCELLED", movedCount: 10 });
    expect((await errorOf(node.service.moveTasks.cancel("", task.taskHandle))).code).toBe("UnsupportedOperation");
    expect((await errorOf(node.service.moveTasks.cancel("", "no-such-task"))).code).toBe("InvalidParameterValue");
    expect((await errorOf(node.service.moveTasks.cancel("", "00000000-0000-7000-8000-000000000000"))).code).toBe("ResourceNotFound");
    // A new task may start once the old one is no longer active.
    await node.service.moveTasks.start("", { sourceQueueName: "dlq" });
  });

  it("fails when a message's source queue is gone", async () => {
    await deadLettered(3, "gone");
    await deadLettered(0, "keeper"); // keeps "dlq" a dead-letter queue
    await node.service.deleteQueue("", "gone");
    await node.service.moveTasks.start("", { sourceQueueName: "dlq" });
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq"))[0]).toMatchObject({ status: "FAILED", failureReason: "MessageSourceUnknown", movedCount: 0 });
  });

  it("fails, moving nothing, when the destination is deleted after the runner read it", async () => {
    const { dlq } = await deadLettered(5);
    await node.service.createQueue("", { name: "dest" });
    // The runner reads the destination, then the batch's write runs: a DeleteQueue lands in between.
    const move = node.store.messageMove.bind(node.store);
    const raced = vi.spyOn(node.store, "messageMove").mockImplementationOnce(async (p) => {
      await node.service.deleteQueue("", "dest");
      return move(p);
    });
    await node.service.moveTasks.start("", { sourceQueueName: "dlq", destinationQueueName: "dest" });
    await node.service.moveTasks.runner.idle();
    expect(raced).toHaveBeenCalledTimes(1);
    expect((await node.service.moveTasks.list("", "dlq"))[0]).toMatchObject({ status: "FAILED", failureReason: "DestinationQueueGone", movedCount: 0 });
    expect((await bodiesIn(dlq)).length).toBe(5); // still where they were
  });

  it("fails, moving nothing, when its source queue is deleted after the runner read it", async () => {
    await deadLettered(5);
    // The runner reads the source, then the batch's write runs: a DeleteQueue of the DLQ lands in between.
    const move = node.store.messageMove.bind(node.store);
    const raced = vi.spyOn(node.store, "messageMove").mockImplementationOnce(async (p) => {
      await node.service.deleteQueue("", "dlq");
      return move(p);
    });
    const { taskHandle } = await node.service.moveTasks.start("", { sourceQueueName: "dlq" });
    await node.service.moveTasks.runner.idle();
    expect(raced).toHaveBeenCalledTimes(1);
    // Its messages went with it: an empty batch, which must not pass for "all moved" (COMPLETED).
    expect(await node.store.moveTaskGet({ taskHandle })).toMatchObject({ status: "FAILED", failureReason: "SourceQueueGone", movedCount: 0 });
  });

  it("resumes after a restart", async () => {
    await deadLettered(30);
    await node.service.moveTasks.start("", { sourceQueueName: "dlq", maxMessagesPerSecond: 10 });
    await node.service.moveTasks.runner.idle();
    await node.restart();
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq"))[0]).toMatchObject({ status: "RUNNING", movedCount: 20 });
    clock.advance(1_000);
    await node.service.moveTasks.runner.idle();
    clock.advance(1_000);
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq"))[0]).toMatchObject({ status: "COMPLETED", movedCount: 30 });
    const src = await node.service.getQueue("", "src");
    expect((await bodiesIn(src)).length).toBe(30);
  });

  it("lists the latest tasks first, 1 by default and at most 10", async () => {
    await deadLettered(1);
    const first = await node.service.moveTasks.start("", { sourceQueueName: "dlq" });
    await node.service.moveTasks.runner.idle();
    clock.advance(1);
    const second = await node.service.moveTasks.start("", { sourceQueueName: "dlq" });
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq")).map((t) => t.taskHandle)).toEqual([second.taskHandle]);
    expect((await node.service.moveTasks.list("", "dlq", 10)).map((t) => t.taskHandle)).toEqual([second.taskHandle, first.taskHandle]);
    expect((await errorOf(node.service.moveTasks.list("", "dlq", 11))).code).toBe("InvalidParameterValue");
    expect((await errorOf(node.service.moveTasks.list("", "nope"))).code).toBe("ResourceNotFound");
  });
});

describe("StartMessageMoveTask on FIFO queues", () => {
  /** src.fifo dead-letters to dlq.fifo on the second receive; `count` messages of group g end up there. */
  async function fifoDeadLettered(count: number): Promise<{ src: QueueRecord; dlq: QueueRecord }> {
    const s = node.service;
    const { queue: dlq } = await s.createQueue("", { name: "dlq.fifo", config: { fifoQueue: true, contentBasedDeduplication: true } });
    const { queue: src } = await s.createQueue("", {
      name: "src.fifo",
      config: { fifoQueue: true, contentBasedDeduplication: true, visibilityTimeoutSeconds: 0, redrivePolicy: { deadLetterQueueName: "dlq.fifo", maxReceiveCount: 1 } },
    });
    await s.sendMessages(src, Array.from({ length: count }, (_, i) => ({ body: `old-${i}`, groupId: "g" })));
    while ((await s.queueStats(src)).visible > 0) await s.receiveMessages(src, { maxMessages: 10 });
    expect((await s.queueStats(dlq)).visible).toBe(count);
    return { src, dlq };
  }

  // SQS: the destination ingests redriven messages in the order it receives them, interleaved with
  // new sends — a redrive is a new enqueue, at the back of its group, with a new SequenceNumber.
  it("enqueues redriven messages behind the group's newer messages, and not while the group is in flight", async () => {
    const s = node.service;
    const { src } = await fifoDeadLettered(10);
    const sent = await s.sendMessage(src, { body: "new-0", groupId: "g" });
    const [inFlight] = await s.receiveMessages(src, { visibilityTimeoutSeconds: 600 });
    expect(inFlight!.body).toBe("new-0");
    await node.service.moveTasks.start("", { sourceQueueName: "dlq.fifo" });
    await node.service.moveTasks.runner.idle();
    expect((await node.service.moveTasks.list("", "dlq.fifo"))[0]).toMatchObject({ status: "COMPLETED", movedCount: 10 });
    // new-0 is in flight: its group is locked, redriven messages included.
    expect(await s.receiveMessages(src, { maxMessages: 10 })).toEqual([]);
    await s.deleteMessages(src, [inFlight!.receiptHandle]);
    const redriven = await s.receiveMessages(src, { maxMessages: 10, visibilityTimeoutSeconds: 600 });
    expect(redriven.map((m) => m.body)).toEqual(Array.from({ length: 10 }, (_, i) => `old-${i}`));
    for (const m of redriven) expect(m.seq).toBeGreaterThan(sent.seq);
  });

  it("puts redriven messages after a message sent before the redrive", async () => {
    const s = node.service;
    const { src } = await fifoDeadLettered(2);
    await s.sendMessage(src, { body: "new-0", groupId: "g" });
    await node.service.moveTasks.start("", { sourceQueueName: "dlq.fifo" });
    await node.service.moveTasks.runner.idle();
    const got = await s.receiveMessages(src, { maxMessages: 10, visibilityTimeoutSeconds: 600 });
    expect(got.map((m) => m.body)).toEqual(["new-0", "old-0", "old-1"]);
  });
});
