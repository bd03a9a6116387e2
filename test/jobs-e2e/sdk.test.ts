/**
 * The SDK against a real in-process server: submit / wait / get / cancel, idempotent replay,
 * how handler errors become failed or retried jobs, cancellation reaching ctx.signal, progress,
 * batch handlers, and graceful close.
 */
import { describe, expect, it } from "vitest";
import {
  BatchItemError,
  JobCanceledError,
  JobWaitTimeoutError,
  type LeasedJob,
  NonRetryableError,
  RetryableError,
  type Sluice,
  SluiceApiError,
  WorkerClosingError,
} from "../../client/src/index.js";
import type { TestServer } from "../support/server.js";
import { useSdkServer } from "../support/sdk-server.js";
import { waitFor, within } from "../support/wait.js";
import { gate } from "../support/gates.js";

let server: TestServer;
let sluice: Sluice;
const { freshQueue, track } = useSdkServer("sdk", (started, client) => {
  server = started;
  sluice = client;
});

describe("submit, get, wait, cancel", () => {
  // wire: lifecycle
  it("submits, gets, waits for the worker's result", async () => {
    const q = sluice.queue(freshQueue());
    const handle = await q.submit({ text: "hi" }, { priority: 5, metadata: { user: "u1" } });
    expect(handle.job).toMatchObject({ status: "queued", queue: q.name, input: { text: "hi" }, priority: 5, metadata: { user: "u1" } });
    expect(handle.replayed).toBe(false);
    expect((await handle.get()).id).toBe(handle.id);
    expect((await sluice.jobs.get(handle.id)).status).toBe("queued");

    track(q.work<{ text: string }, { upper: string }>(async (job) => ({ upper: job.input.text.toUpperCase() })));
    const done = await handle.wait({ timeoutMs: 10_000 });
    expect(done).toMatchObject({ status: "succeeded", output: { upper: "HI" }, attempt: 1 });
    expect(done.finishedAt).not.toBeNull();
  });

  it("runAt takes a Date or RFC 3339 text; an invalid Date is refused before any request", async () => {
    const q = sluice.queue(freshQueue());
    const at = new Date(Date.now() + 30 * 86_400_000);
    const byDate = await q.submit("later", { runAt: at });
    expect(byDate.job).toMatchObject({ status: "queued", availableAt: at.toISOString() });
    const byText = await q.submit("later too", { runAt: "2001-01-01T00:00:00Z" });
    expect(Date.parse(byText.job.availableAt!)).toBeGreaterThan(Date.parse("2001-01-01T00:00:00Z")); // a past time runs now
    await expect(q.submit("never", { runAt: new Date(Number.NaN) })).rejects.toThrow(/runAt is an invalid Date/);
    expect((await q.list()).jobs.map((j) => j.input).sort()).toEqual(["later", "later too"]);
  });

  // wire: wait-timeout
  it("wait() gives up after timeoutMs with JobWaitTimeoutError carrying the last state", async () => {
    const handle = await sluice.queue(freshQueue()).submit({ x: 1 });
    const err = await handle.wait({ timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobWaitTimeoutError);
    expect((err as JobWaitTimeoutError).job).toMatchObject({ id: handle.id, status: "queued" });
  });

  it("cancels a queued job at once; canceling a finished job is a coded error", async () => {
    const q = sluice.queue(freshQueue());
    const handle = await q.submit({ x: 1 });
    expect((await handle.cancel()).status).toBe("canceled");
    expect((await sluice.jobs.get(handle.id)).status).toBe("canceled");

    const other = await q.submit({ x: 2 });
    track(q.work(async () => "ok"));
    await other.wait({ timeoutMs: 10_000 });
    const err = await sluice.jobs.cancel(other.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SluiceApiError);
    expect(err).toMatchObject({ code: "JobAlreadyFinished", status: 409 });
  });

  it("an unknown job id is SluiceApiError JobNotFound", async () => {
    await expect(sluice.jobs.get("00000000-0000-4000-8000-000000000000")).rejects.toMatchObject({ name: "SluiceApiError", code: "JobNotFound", status: 404 });
  });

  // wire: idempotency-key
  it("replays an idempotent submit as the same job; the same key with another body is refused", async () => {
    const q = sluice.queue(freshQueue());
    const a = await q.submit({ prompt: "p" }, { idempotencyKey: "key-1" });
    const b = await q.submit({ prompt: "p" }, { idempotencyKey: "key-1" });
    expect(b.id).toBe(a.id);
    expect(a.replayed).toBe(false);
    expect(b.replayed).toBe(true);
    expect(b.job.idempotencyKey).toBe("key-1");
    await expect(q.submit({ prompt: "other" }, { idempotencyKey: "key-1" })).rejects.toMatchObject({ code: "IdempotencyKeyReused", status: 422 });
    // Without a key, each submit is its own job (the SDK's own key only guards its retries).
    const c = await q.submit({ prompt: "p" });
    const d = await q.submit({ prompt: "p" });
    expect(c.id).not.toBe(d.id);
  });

  it("lists a queue's jobs by status", async () => {
    const q = sluice.queue(freshQueue());
    const handles = await Promise.all([1, 2, 3].map((n) => q.submit({ n })));
    const page = await q.list({ status: "queued" });
    expect(page.jobs.map((j) => j.id).sort()).toEqual(handles.map((h) => h.id).sort());
  });
});

describe("queue.run: submit and get the finished job", () => {
  // wire: run
  it("resolves with the finished job, succeeded or failed, as wait() would", async () => {
    const q = sluice.queue(freshQueue());
    track(q.work<{ n: number }, number>(async (job) => {
      if (job.input.n < 0) throw new NonRetryableError("negative");
      return job.input.n * 2;
    }));
    const done = await q.run<{ n: number }, number>({ n: 21 }, { timeoutMs: 10_000, priority: 3 });
    expect(done).toMatchObject({ status: "succeeded", output: 42, input: { n: 21 }, priority: 3 });
    const failed = await q.run({ n: -1 }, { timeoutMs: 10_000 });
    expect(failed).toMatchObject({ status: "failed", error: { message: "negative" } });
  });

  it("gives up after timeoutMs with JobWaitTimeoutError; the job stays queued", async () => {
    const q = sluice.queue(freshQueue());
    const err = await q.run({ x: 1 }, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobWaitTimeoutError);
    const job = (err as JobWaitTimeoutError).job;
    expect(job.status).toBe("queued");
    expect((await sluice.jobs.get(job.id)).status).toBe("queued");
  });

  it("with an Idempotency-Key, a second run is the same job", async () => {
    const q = sluice.queue(freshQueue());
    track(q.work(async () => "ok"));
    const a = await q.run({ p: 1 }, { idempotencyKey: "run-1", timeoutMs: 10_000 });
    const b = await q.run({ p: 1 }, { idempotencyKey: "run-1", timeoutMs: 10_000 });
    expect(b).toMatchObject({ id: a.id, status: "succeeded", output: "ok" });
    await expect(q.run({ p: 2 }, { idempotencyKey: "run-1" })).rejects.toMatchObject({ code: "IdempotencyKeyReused", status: 422 });
  });
});

describe("handler outcomes", () => {
  // wire: outcomes
  it("NonRetryableError fails the job after one attempt, into the dead-letter queue", async () => {
    const q = sluice.queue(freshQueue());
    const handle = await q.submit({ bad: true }, { maxAttempts: 5 });
    let calls = 0;
    track(
      q.work(async () => {
        calls++;
        throw new NonRetryableError("input is malformed");
      }),
    );
    const done = await handle.wait({ timeoutMs: 10_000 });
    expect(done).toMatchObject({ status: "failed", attempt: 1, error: { message: "input is malformed", type: "NonRetryableError" } });
    expect(calls).toBe(1);
    const res = await fetch(`${server.url}/v1/queues/${q.name}`);
    const { queue } = (await res.json()) as { queue: { stats: { deadLetterMessages: number | null } } };
    expect(queue.stats.deadLetterMessages).toBe(1);
  });

  // wire: outcomes
  it("other errors are retried; the job fails after maxAttempts with the last error recorded", async () => {
    const q = sluice.queue(freshQueue());
    const flaky = await q.submit({ kind: "flaky" }, { maxAttempts: 3 });
    const doomed = await q.submit({ kind: "doomed" }, { maxAttempts: 2 });
    const attempts: string[] = [];
    track(
      q.work<{ kind: string }>(async (job) => {
        attempts.push(`${job.input.kind}@${job.attempt}`);
        if (job.input.kind === "flaky" && job.attempt < 2) throw new RetryableError("try again", { retryAfterSeconds: 0 });
        if (job.input.kind === "doomed") throw new RetryableError(`boom ${job.attempt}`, { retryAfterSeconds: 0 });
        return "recovered";
      }),
    );
    expect(await flaky.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "succeeded", attempt: 2, output: "recovered" });
    expect(await doomed.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "failed", attempt: 2, error: { message: "boom 2", type: "RetryableError" } });
    expect(attempts.filter((a) => a.startsWith("flaky"))).toEqual(["flaky@1", "flaky@2"]);
    expect(attempts.filter((a) => a.startsWith("doomed"))).toEqual(["doomed@1", "doomed@2"]);
  });

  it("a plain thrown Error is retried after the queue's backoff", async () => {
    const name = freshQueue();
    // A zero backoff keeps the test fast; the retry path is the same.
    await fetch(`${server.url}/v1/queues/${name}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ backoff: { baseSeconds: 0, capSeconds: 0 } }) });
    const q = sluice.queue(name);
    const handle = await q.submit({}, { maxAttempts: 2 });
    track(
      q.work(async (job) => {
        if (job.attempt === 1) throw new TypeError("transient");
        return job.attempt;
      }),
    );
    expect(await handle.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "succeeded", attempt: 2, output: 2 });
  });
});

describe("cancellation and progress", () => {
  // wire: cancel
  it("ctx.signal fires when a running job is canceled, and the job ends canceled", async () => {
    const q = sluice.queue(freshQueue());
    const started = gate();
    const sawAbort = gate<unknown>();
    track(
      q.work(
        async (_job, ctx) => {
          started.open();
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
          sawAbort.open(ctx.signal.reason);
          return "stopped early";
        },
        { leaseSeconds: 3 },
      ),
    );
    const handle = await q.submit({ long: true });
    await within(10_000, started.promise, "handler start");
    expect((await handle.cancel()).status).toBe("running");
    const reason = await within(10_000, sawAbort.promise, "ctx.signal abort");
    expect(reason).toBeInstanceOf(JobCanceledError);
    expect((await handle.wait({ timeoutMs: 10_000 })).status).toBe("canceled");
  });

  // wire: heartbeats
  it("ctx.progress() reaches the server with the next heartbeat", async () => {
    const q = sluice.queue(freshQueue());
    const release = gate();
    track(
      q.work(
        async (_job, ctx) => {
          ctx.progress(0.5);
          await release.promise;
          return "done";
        },
        { leaseSeconds: 3 },
      ),
    );
    const handle = await q.submit({});
    await waitFor(async () => (await handle.get()).progress === 0.5, { timeoutMs: 10_000, intervalMs: 50, what: "progress 0.5 on the server" });
    release.open();
    expect((await handle.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
  });
});

describe("batch handlers", () => {
  // wire: batch
  it("get at most `size` jobs per call and can fail items one by one", async () => {
    const q = sluice.queue(freshQueue());
    const handles = await Promise.all([0, 1, 2, 3, 4, 5, 6].map((n) => q.submit({ n, bad: n === 4 })));
    const batchSizes: number[] = [];
    track(
      q.work<{ n: number; bad: boolean }, number>(
        async (jobs) => {
          batchSizes.push(jobs.length);
          return jobs.map((job) => (job.input.bad ? new BatchItemError("bad item", { retryable: false }) : job.input.n * 10));
        },
        { batch: { size: 3, windowMs: 50 } },
      ),
    );
    const results = await Promise.all(handles.map((h) => h.wait({ timeoutMs: 10_000 })));
    expect(results.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded", "failed", "succeeded", "succeeded"]);
    expect(results.filter((r) => r.status === "succeeded").map((r) => r.output)).toEqual([0, 10, 20, 30, 50, 60]);
    expect(results[4]).toMatchObject({ attempt: 1, error: { message: "bad item", type: "BatchItemError" } });
    expect(batchSizes.reduce((a, b) => a + b, 0)).toBe(7);
    expect(Math.max(...batchSizes)).toBeLessThanOrEqual(3);
    // Seven jobs were waiting, so the first lease came back full.
    expect(batchSizes[0]).toBe(3);
  });

  it("gathers jobs submitted within the window into one batch", async () => {
    const q = sluice.queue(freshQueue());
    const batches: number[][] = [];
    track(
      q.work<{ n: number }, number>(
        async (jobs) => {
          batches.push(jobs.map((j) => j.input.n));
          return jobs.map((j) => j.input.n);
        },
        // A long window, so the three submits below land inside it however slow the machine.
        { batch: { size: 3, windowMs: 5_000 } },
      ),
    );
    const handles = [];
    for (const n of [1, 2, 3]) handles.push(await q.submit({ n }));
    await Promise.all(handles.map((h) => h.wait({ timeoutMs: 15_000 })));
    // The batch closed when it was full (3), long before the window ended.
    expect(batches).toEqual([[1, 2, 3]]);
  });
});

describe("close", () => {
  it("stops leasing, finishes in-flight jobs, then resolves", async () => {
    const q = sluice.queue(freshQueue());
    const release = gate();
    let started = 0;
    const worker = track(
      q.work(
        async (job: LeasedJob) => {
          started++;
          await release.promise;
          return job.id;
        },
        { concurrency: 2 },
      ),
    );
    const [a, b] = await Promise.all([q.submit({ a: 1 }), q.submit({ b: 1 })]);
    await waitFor(() => started === 2, { timeoutMs: 10_000, what: "both handlers running" });

    let closed = false;
    const closing = worker.close().then(() => (closed = true));
    // While handlers run, close() waits for them.
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    release.open();
    await within(10_000, closing, "close");

    expect((await a!.get()).status).toBe("succeeded");
    expect((await b!.get()).status).toBe("succeeded");
    expect(worker.stats).toMatchObject({ completed: 2, active: 0 });
    // A closed worker leases nothing more.
    const later = await q.submit({ late: 1 });
    expect((await later.get()).status).toBe("queued");
  });

  it("close({ timeoutMs }) aborts handlers still running and hands their jobs back", async () => {
    const q = sluice.queue(freshQueue());
    const reasons: unknown[] = [];
    const started = gate();
    const worker = track(
      q.work(async (_job, ctx) => {
        started.open();
        await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
        reasons.push(ctx.signal.reason);
        throw ctx.signal.reason;
      }),
    );
    const handle = await q.submit({}, { maxAttempts: 3 });
    await within(10_000, started.promise, "handler start");
    await within(10_000, worker.close({ timeoutMs: 100 }), "close with timeout");
    expect(reasons[0]).toBeInstanceOf(WorkerClosingError);
    const job = await handle.get();
    expect(job.status).toBe("queued");
    expect(job.error?.type).toBe("WorkerClosingError");
  });
});
