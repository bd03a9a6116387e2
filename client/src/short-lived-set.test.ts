import { describe, expect, it } from "vitest";
import { ShortLivedSet } from "./short-lived-set.js";

describe("ShortLivedSet", () => {
  it("holds what a Set would, in insertion order, across the swaps to a fresh copy", () => {
    const set = new ShortLivedSet<number>();
    const reference = new Set<number>();
    // Enough churn for many swaps (one every 64 + 2 × size deletions), with deletes of absent values mixed in.
    for (let i = 0; i < 2_000; i++) {
      set.add(i);
      reference.add(i);
      if (i % 3 !== 0) {
        const gone = i - 7;
        set.delete(gone);
        reference.delete(gone);
      }
      if (i % 97 === 0) {
        expect(set.size).toBe(reference.size);
        expect([...set]).toEqual([...reference]);
      }
    }
    expect([...set]).toEqual([...reference]);
    set.delete(-5); // absent: changes nothing
    expect(set.size).toBe(reference.size);
  });
});
