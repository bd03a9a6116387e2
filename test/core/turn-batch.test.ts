/**
 * Core's turn batcher: the calls of one event-loop turn reach the store as one `*Many` call, each
 * answered with its own result; a failing call fails every call of its turn and none of the next.
 */
import { describe, expect, it } from "vitest";
import { TurnBatch, oneAtATime } from "../../src/core/turn-batch.js";

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

  it("oneAtATime without gathering calls the store at once, one item per call", async () => {
    const calls: number[][] = [];
    const one = oneAtATime<number, number>(false, async (items) => {
      calls.push(items);
      return items.map((n) => n * 10);
    });
    expect(await Promise.all([one(1), one(2)])).toEqual([10, 20]);
    expect(calls).toEqual([[1], [2]]);
  });
});
