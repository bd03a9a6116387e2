import { describe, expect, it } from "vitest";
import type { JobRecord } from "../../src/core/job.js";
import type { NewMessage } from "../../src/core/message.js";
import { DeferredCreates, comesBefore } from "../../src/stores/sqlite/deferred-creates.js";

const job = (id: string): JobRecord => ({ id, queueId: 1 }) as JobRecord;
const message = (priority: number, visibleAtMs: number): NewMessage => ({ priority, visibleAtMs, sentAtMs: 0 }) as NewMessage;

describe("a group's deferred submits in receive order", () => {
  it("takes priority high first, then the earlier visible, then the order they came in", () => {
    const d = new DeferredCreates();
    d.add(0, job("late"), message(5, 20));
    d.add(0, job("low"), message(0, 0));
    d.add(0, job("first"), message(5, 10));
    d.add(0, job("second"), message(5, 10));
    d.add(0, job("hidden"), message(9, 99));
    expect(d.ready(1, 50, 0, 10).map((e) => e.job.id)).toEqual(["first", "second", "late", "low"]);
    expect(d.ready(1, 50, 0, 2).map((e) => e.job.id)).toEqual(["first", "second"]);
  });

  it("comes after a row of the table at its priority and visibility (the row was inserted first), before a later or lower one", () => {
    const d = new DeferredCreates();
    const { entry } = d.add(0, job("fresh"), message(5, 10));
    expect(comesBefore(entry, { priority: 5, visible_at_ms: 10, seq: 7 })).toBe(false);
    expect(comesBefore(entry, { priority: 5, visible_at_ms: 11, seq: 7 })).toBe(true);
    expect(comesBefore(entry, { priority: 4, visible_at_ms: 0, seq: 7 })).toBe(true);
    expect(comesBefore(entry, { priority: 6, visible_at_ms: 99, seq: 7 })).toBe(false);
  });
});
