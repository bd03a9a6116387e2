import { describe, expect, it } from "vitest";
import { BatchItemError, JobCanceledError, NonRetryableError, RetryableError, WorkerClosingError } from "./errors.js";
import { outcomeOf, outcomesOfBatch } from "./outcomes.js";

const live = { abortReason: undefined };
function abortedWith(reason: Error): { abortReason: Error } {
  return { abortReason: reason };
}

describe("outcomes", () => {
  it("completes with the return value, undefined as null", () => {
    expect(outcomeOf({ ok: true, value: { a: 1 } }, live)).toEqual({ kind: "complete", output: { a: 1 } });
    expect(outcomeOf({ ok: true, value: undefined }, live)).toEqual({ kind: "complete", output: null });
  });

  it("fails retryable by default, not for NonRetryableError, with a delay for RetryableError", () => {
    expect(outcomeOf({ ok: false, error: new TypeError("boom") }, live)).toEqual({
      kind: "fail",
      failure: { error: { message: "boom", type: "TypeError" }, retryable: true },
    });
    expect(outcomeOf({ ok: false, error: new NonRetryableError("bad input") }, live)).toMatchObject({ failure: { retryable: false } });
    expect(outcomeOf({ ok: false, error: new RetryableError("rate limited", { retryAfterSeconds: 7 }) }, live)).toMatchObject({
      failure: { retryable: true, retryAfterSeconds: 7 },
    });
    expect(outcomeOf({ ok: false, error: "a string" }, live)).toMatchObject({ failure: { error: { message: "a string", type: "string" } } });
  });

  it("recognises a NonRetryableError from another copy of the package by its registry symbol", () => {
    const foreign = Object.assign(new Error("x"), { [Symbol.for("@sluice/client.failureDirective")]: { retryable: false } });
    expect(outcomeOf({ ok: false, error: foreign }, live)).toMatchObject({ failure: { retryable: false } });
  });

  it("reports a canceled job as a failure (the server turns it into canceled), whatever the handler returned", () => {
    const canceled = abortedWith(new JobCanceledError("j1"));
    expect(outcomeOf({ ok: true, value: { partial: true } }, canceled)).toMatchObject({ kind: "fail", failure: { retryable: false, error: { type: "JobCanceledError" } } });
  });

  it("hands a job cut short by close() back with no delay", () => {
    expect(outcomeOf({ ok: false, error: new Error("aborted") }, abortedWith(new WorkerClosingError()))).toMatchObject({
      failure: { retryable: true, retryAfterSeconds: 0 },
    });
  });

  it("truncates error fields to the API's limits and rejects non-JSON output", () => {
    const long = outcomeOf({ ok: false, error: new Error("x".repeat(10_000)) }, live);
    expect(long.kind === "fail" && long.failure.error.message.length).toBe(8192);
    expect(outcomeOf({ ok: true, value: { n: 1n } }, live)).toMatchObject({ kind: "fail", failure: { retryable: false } });
  });

  it("fails an output over 1 MiB of JSON at once, counting UTF-8 bytes", () => {
    expect(outcomeOf({ ok: true, value: "x".repeat(1_048_574) }, live)).toMatchObject({ kind: "complete" });
    expect(outcomeOf({ ok: true, value: "x".repeat(1_048_575) }, live)).toMatchObject({
      kind: "fail",
      failure: { retryable: false, error: { type: "NonRetryableError", message: "handler output is 1048577 bytes of JSON; a job's output is at most 1048576 (1 MiB)" } },
    });
    // 400,000 three-byte characters: 1.2 MB of UTF-8 in 400,002 UTF-16 units.
    expect(outcomeOf({ ok: true, value: "€".repeat(400_000) }, live)).toMatchObject({ kind: "fail", failure: { retryable: false } });
  });

  it("refuses a retry delay the fail route would refuse when the error is made", () => {
    for (const bad of [1.5, -1, 43_201, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new RetryableError("x", { retryAfterSeconds: bad })).toThrow(RangeError);
      expect(() => new BatchItemError("x", { retryAfterSeconds: bad })).toThrow(RangeError);
    }
    expect(() => new RetryableError("x", { retryAfterSeconds: 1.5 })).toThrow("retryAfterSeconds must be a whole number of seconds in 0–43200, got 1.5");
    expect(new RetryableError("x", { retryAfterSeconds: 0 }).retryAfterSeconds).toBe(0);
    expect(new BatchItemError("x", { retryAfterSeconds: 43_200 }).retryAfterSeconds).toBe(43_200);
  });

  it("maps a batch result position by position, failing items one by one", () => {
    const outcomes = outcomesOfBatch({ ok: true, value: [1, new BatchItemError("nope", { retryable: false }), new BatchItemError("later")] }, [live, live, live]);
    expect(outcomes).toEqual([
      { kind: "complete", output: 1 },
      { kind: "fail", failure: { error: { message: "nope", type: "BatchItemError" }, retryable: false } },
      { kind: "fail", failure: { error: { message: "later", type: "BatchItemError" }, retryable: true } },
    ]);
  });

  it("fails the whole batch when the handler throws or returns the wrong number of results", () => {
    expect(outcomesOfBatch({ ok: false, error: new NonRetryableError("all bad") }, [live, live]).map((o) => o.kind)).toEqual(["fail", "fail"]);
    const wrong = outcomesOfBatch({ ok: true, value: [1] }, [live, live]);
    expect(wrong).toHaveLength(2);
    expect(wrong[0]).toMatchObject({ kind: "fail", failure: { retryable: true, error: { message: expect.stringContaining("one result per job") } } });
  });
});
