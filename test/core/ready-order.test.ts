import { describe, expect, it } from "vitest";
import { comesFirst, firstReady } from "../../src/core/message-rules.js";

describe("receive order", () => {
  it("takes priority high first, then the earlier visible, then the lower seq", () => {
    const rows = [
      { id: "late", priority: 5, visible_at_ms: 200, seq: 1 },
      { id: "low", priority: 0, visible_at_ms: 0, seq: 0 },
      { id: "second", priority: 5, visible_at_ms: 100, seq: 9 },
      { id: "first", priority: 5, visible_at_ms: 100, seq: 3 },
      { id: "top", priority: 9, visible_at_ms: 900, seq: 99 },
    ];
    expect([...rows].sort(comesFirst).map((r) => r.id)).toEqual(["top", "first", "second", "late", "low"]);
    expect(firstReady(rows, 2).map((r) => r.id)).toEqual(["top", "first"]);
    expect(firstReady([], 3)).toEqual([]);
  });
});
