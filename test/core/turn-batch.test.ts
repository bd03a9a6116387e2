/**
 * Core's turn batcher: the calls of one event-loop turn reach the store as one `*Many` call, each
 * answered with its own result; a failing call fails every call of its turn and none of the next;
 * a call that may not share goes alone.
 */
import { describe, expect, it } from "vitest";
import { TurnBatch, oneAtATime, receivesTogether } from "../../src/core/turn-batch.js";
import type { MessageReceiveParams } from "../../src/core/store.js";

describe("TurnBatch", () => {
  it("hands one turn's calls to one call, in order, and answers each with its own result", async () => {
    const calls: number[][] = [];
    const batch = new TurnBatch<number, string>(async (items) => {
      calls.push(items);
      return items.map((n) => `r${n}`);
    });
    const first = await Promise.all([batch.add(1), batch.add(2), batch.add(3)]);
    const second = await batch.add(4);
    expect(first).toEqual(["r1", "r2", "r3"]);
    expect(second).toBe("r4");
    expect(calls).toEqual([[1, 2, 3], [4]]);
  });

  it("fails every call of a failed turn, and the next turn goes on", async () => {
    let fail = true;
    const batch = new TurnBatch<number, number>(async (items) => {
      if (fail) throw new Error("store down");
      return items;
    });
    const failed = await Promise.allSettled([batch.add(1), batch.add(2)]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(await batch.add(3)).toBe(3);
  });

  it("oneAtATime gathers only the calls that may go together, and only for a store that gathers", async () => {
    const calls: number[][] = [];
    const many = async (items: number[]) => {
      calls.push(items);
      return items.map((n) => n * 10);
    };
    const gathering = oneAtATime<number, number>(true, many);
    expect(await Promise.all([gathering(1, true), gathering(2, false), gathering(3, true)])).toEqual([10, 20, 30]);
    expect(calls).toEqual([[2], [1, 3]]);
    calls.length = 0;
    const direct = oneAtATime<number, number>(false, many);
    expect(await Promise.all([direct(1, true), direct(2, true)])).toEqual([10, 20]);
    expect(calls).toEqual([[1], [2]]);
  });
});

describe("receivesTogether", () => {
  const receive = (queueId: number, nowMs: number, more: Partial<MessageReceiveParams> = {}): MessageReceiveParams => ({
    queueId,
    max: 10,
    nowMs,
    visibleUntilMs: nowMs + 30_000,
    minSentAtMs: 0,
    receiptToken: `t${queueId}.${nowMs}`,
    ...more,
  });

  it("puts plain receives of one queue and instant together, in arrival order; FIFO and dead-lettering ones alone", () => {
    const a1 = receive(1, 100);
    const b = receive(2, 100);
    const a2 = receive(1, 100);
    const later = receive(1, 101);
    const fifo = receive(1, 100, { fifo: true, attempt: { attemptId: "x", expiresAtMs: 1 } });
    const dlq = receive(1, 100, { deadLetter: { queueId: 9, maxReceiveCount: 3, sourceQueueName: "q" } });
    expect(receivesTogether([a1, b, fifo, a2, dlq, later])).toEqual({ together: [[a1, a2], [b], [later]], alone: [fifo, dlq] });
  });
});
