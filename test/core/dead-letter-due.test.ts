import { describe, expect, it } from "vitest";
import { dueForDeadLetter } from "../../src/core/message-rules.js";

describe("dueForDeadLetter", () => {
  const deadLetter = { queueId: 7, sourceQueueName: "src", maxReceiveCount: 3 };
  it("moves a message received maxReceiveCount times or more, never one of a queue without a dead-letter queue", () => {
    expect(dueForDeadLetter({ deadLetter }, 2)).toBe(false);
    expect(dueForDeadLetter({ deadLetter }, 3)).toBe(true);
    expect(dueForDeadLetter({ deadLetter }, 9)).toBe(true);
    expect(dueForDeadLetter({}, 1_000)).toBe(false);
  });
});
