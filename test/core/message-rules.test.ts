import { describe, expect, it } from "vitest";
import { dueForDeadLetter, queueStatsOf } from "../../src/core/message-rules.js";

describe("dueForDeadLetter", () => {
  const deadLetter = { queueId: 7, sourceQueueName: "src", maxReceiveCount: 3 };
  it("moves a message received maxReceiveCount times or more, never one of a queue without a dead-letter queue", () => {
    expect(dueForDeadLetter({ deadLetter }, 2)).toBe(false);
    expect(dueForDeadLetter({ deadLetter }, 3)).toBe(true);
    expect(dueForDeadLetter({ deadLetter }, 9)).toBe(true);
    expect(dueForDeadLetter({}, 1_000)).toBe(false);
  });
});

describe("queueStatsOf", () => {
  it("counts as visible what is kept less the hidden and the expired, never below zero", () => {
    expect(queueStatsOf({ total: 10, inFlight: 3, delayed: 2, expired: 1, oldestSentAtMs: 5 })).toEqual({ visible: 4, inFlight: 3, delayed: 2, oldestVisibleSentAtMs: 5 });
    expect(queueStatsOf({ total: 1, inFlight: 1, delayed: 0, expired: 1, oldestSentAtMs: null })).toEqual({ visible: 0, inFlight: 1, delayed: 0, oldestVisibleSentAtMs: undefined });
  });
});
