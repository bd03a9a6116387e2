/**
 * queue.run() against a scripted fetch on a manual clock: how it splits its timeout between the
 * held submit (`?wait=`, whole seconds, never past the deadline) and the GET ?wait= long polls after it.
 */
import { describe, expect, it } from "vitest";
import { JobWaitTimeoutError } from "./errors.js";
import type { FetchLike } from "./http.js";
import { Sluice } from "./sluice.js";
import type { Timers } from "./timers.js";
import type { Job } from "./wire.js";

/** A clock that moves only when a scripted answer says so; timers never fire on their own. */
function manualTimers(): Timers & { advance(ms: number): void } {
  let now = 1_000_000;
  return { nowMs: () => now, schedule: () => () => {}, advance: (ms) => void (now += ms) };
}

function job(status: Job["status"]): Job {
  return { id: "j1", queue: "q", status, input: 1, output: status === "succeeded" ? 2 : null, error: null, attempt: 1, maxAttempts: 3, priority: 0, progress: null, createdAt: "", startedAt: null, finishedAt: null, idempotencyKey: "k", metadata: null, attachments: {}, outputAttachments: {} };
}

/** Answers each request with the next entry; `elapseMs` moves the clock as if the server held it. */
function scripted(timers: ReturnType<typeof manualTimers>, answers: Array<{ status: number; job: Job; elapseMs?: number }>): FetchLike & { urls: string[] } {
  const urls: string[] = [];
  const f = (async (url: string, _init: RequestInit) => {
    urls.push(url);
    const next = answers.shift();
    if (!next) throw new Error("no more scripted answers");
    timers.advance(next.elapseMs ?? 0);
    return new Response(JSON.stringify({ job: next.job }), { status: next.status, headers: { "content-type": "application/json" } });
  }) as FetchLike & { urls: string[] };
  f.urls = urls;
  return f;
}

describe("queue.run()", () => {
  it("returns the finished job from the held submit: one request", async () => {
    const timers = manualTimers();
    const fetch = scripted(timers, [{ status: 201, job: job("succeeded") }]);
    const done = await new Sluice({ url: "http://x", fetch, timers }).queue("q").run(1);
    expect(done).toMatchObject({ status: "succeeded", output: 2 });
    expect(fetch.urls).toEqual(["http://x/v1/queues/q/jobs?wait=60"]);
  });

  it("holds at most the whole seconds of timeoutMs, then long-polls for the rest", async () => {
    const timers = manualTimers();
    const fetch = scripted(timers, [
      { status: 201, job: job("running"), elapseMs: 2_000 },
      { status: 200, job: job("succeeded") },
    ]);
    const done = await new Sluice({ url: "http://x", fetch, timers }).queue("q").run(1, { timeoutMs: 2_500 });
    expect(done.status).toBe("succeeded");
    expect(fetch.urls).toEqual(["http://x/v1/queues/q/jobs?wait=2", "http://x/v1/jobs/j1?wait=1"]);
  });

  it("holds the whole seconds of timeoutMs however the clock ticks while run() starts", async () => {
    const timers = manualTimers();
    const ticking = { ...timers, nowMs: () => (timers.advance(1), timers.nowMs()) };
    const fetch = scripted(timers, [{ status: 201, job: job("succeeded") }]);
    await new Sluice({ url: "http://x", fetch, timers: ticking }).queue("q").run(1, { timeoutMs: 15_000 });
    expect(fetch.urls).toEqual(["http://x/v1/queues/q/jobs?wait=15"]);
  });

  it("a sub-second timeout submits without a hold; JobWaitTimeoutError carries the last state", async () => {
    const timers = manualTimers();
    const fetch = scripted(timers, [
      { status: 201, job: job("queued"), elapseMs: 500 },
      { status: 200, job: job("running") },
    ]);
    const err = await new Sluice({ url: "http://x", fetch, timers }).queue("q").run(1, { timeoutMs: 400 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobWaitTimeoutError);
    expect((err as JobWaitTimeoutError).job.status).toBe("running");
    expect(fetch.urls).toEqual(["http://x/v1/queues/q/jobs", "http://x/v1/jobs/j1"]);
  });
});
