/**
 * Heartbeat cadence and lease-loss rules of one leased job, on hand-driven timers and a scripted
 * fetch: exact timing that a real server and wall clock could only approximate. (The same
 * behaviour against the real server is in test/jobs-e2e.)
 */
import { describe, expect, it } from "vitest";
import { BlobTransfer } from "./blob-transfer.js";
import { JobCanceledError, LeaseLostError } from "./errors.js";
import { type FetchLike, HttpClient } from "./http.js";
import { JobLease, type WorkerPhase } from "./job-lease.js";
import type { Timers } from "./timers.js";
import type { LeasedJob } from "./wire.js";

class ManualTimers implements Timers {
  private now = 0;
  private timers: { at: number; fn: () => void; live: boolean }[] = [];
  nowMs(): number {
    return this.now;
  }
  schedule(delayMs: number, fn: () => void): () => void {
    const t = { at: this.now + delayMs, fn, live: true };
    this.timers.push(t);
    return () => void (t.live = false);
  }
  /** Moves time forward, firing due timers in order and letting their promises settle. */
  async advance(ms: number): Promise<void> {
    const target = this.now + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.live && t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.live = false;
      this.now = due.at;
      due.fn();
      for (let i = 0; i < 20; i++) await Promise.resolve();
    }
    this.now = target;
  }
}

interface Call {
  at: number;
  path: string;
  body: Record<string, unknown>;
}

function fakeServer(timers: ManualTimers, answer: (call: Call) => { status: number; body: unknown }): { fetch: FetchLike; calls: Call[] } {
  const calls: Call[] = [];
  const fetch: FetchLike = async (url, init) => {
    const call = { at: timers.nowMs(), path: new URL(url).pathname, body: JSON.parse(String(init.body ?? "{}")) as Record<string, unknown> };
    calls.push(call);
    const { status, body } = answer(call);
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  };
  return { fetch, calls };
}

const job = { id: "j1", leaseId: "L1", input: {}, attempt: 1 } as unknown as LeasedJob;

function setup(answer: (call: Call) => { status: number; body: unknown }) {
  const timers = new ManualTimers();
  const server = fakeServer(timers, answer);
  const errors: { phase: WorkerPhase; err: unknown }[] = [];
  const http = new HttpClient({ url: "http://sluice", fetch: server.fetch, timers });
  const lease = new JobLease({ http, transfer: new BlobTransfer(http, 1), timers, random: () => 0.5, leaseSeconds: 30, onError: (err, w) => errors.push({ phase: w.phase, err }) }, job);
  return { timers, calls: server.calls, errors, lease };
}

describe("JobLease", () => {
  it("heartbeats every third of the lease, carrying the latest progress once", async () => {
    const { timers, calls, lease } = setup(() => ({ status: 200, body: { cancelRequested: false } }));
    lease.startHeartbeats();
    lease.context.progress(0.2);
    // Taken off ctx, as a handler may: it still records for this lease.
    const { progress } = lease.context;
    progress(0.4);
    await timers.advance(9_999);
    expect(calls).toHaveLength(0);
    await timers.advance(1);
    await timers.advance(20_000);
    expect(calls.map((c) => c.at)).toEqual([10_000, 20_000, 30_000]);
    expect(calls.map((c) => c.path)).toEqual(["/v1/jobs/j1/heartbeat", "/v1/jobs/j1/heartbeat", "/v1/jobs/j1/heartbeat"]);
    expect(calls[0]!.body).toEqual({ leaseId: "L1", leaseSeconds: 30, progress: 0.4 });
    expect(calls[1]!.body).toEqual({ leaseId: "L1", leaseSeconds: 30 });
    expect(() => lease.context.progress(Number.NaN)).toThrow(TypeError);
    lease.context.progress(7);
    await timers.advance(10_000);
    expect(calls[3]!.body.progress).toBe(1);
    lease.stopHeartbeats();
    await timers.advance(60_000);
    expect(calls).toHaveLength(4);
  });

  it("aborts ctx.signal with JobCanceledError when the server says cancel was requested", async () => {
    const { timers, lease } = setup(() => ({ status: 200, body: { cancelRequested: true } }));
    lease.startHeartbeats();
    await timers.advance(10_000);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(JobCanceledError);
    expect(lease.cancelRequested).toBe(true);
  });

  it("ctx.signal is one signal however often it is read: a listener added before the cancel hears it; one read after is aborted already", async () => {
    const { timers, lease } = setup(() => ({ status: 200, body: { cancelRequested: true } }));
    const heard: unknown[] = [];
    const signal = lease.context.signal;
    signal.addEventListener("abort", () => heard.push(signal.reason));
    expect(lease.context.signal).toBe(signal);
    lease.startHeartbeats();
    await timers.advance(10_000);
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeInstanceOf(JobCanceledError);
    expect(lease.abortReason).toBe(heard[0]);
    // A second cancel reason never replaces the first.
    lease.abort(new LeaseLostError(lease.job.id, "LeaseExpired"));
    expect(lease.context.signal.reason).toBe(heard[0]);
  });

  it("on a 409 stops heartbeating, aborts with LeaseLostError and reports nothing more", async () => {
    const { timers, calls, lease, errors } = setup((c) =>
      c.path.endsWith("heartbeat") ? { status: 409, body: { error: { code: "LeaseExpired", message: "gone" } } } : { status: 200, body: {} },
    );
    lease.startHeartbeats();
    await timers.advance(60_000);
    expect(calls).toHaveLength(1);
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(lease.signal.reason).toMatchObject({ code: "LeaseExpired" });
    await lease.report({ kind: "complete", output: 1 });
    expect(calls).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it("retries a failed heartbeat sooner than the cadence, keeping the unsent progress", async () => {
    let down = true;
    const { timers, calls, lease, errors } = setup(() =>
      down ? { status: 503, body: { error: { code: "Unavailable", message: "restarting" } } } : { status: 200, body: { cancelRequested: false } },
    );
    lease.startHeartbeats();
    lease.context.progress(0.3);
    await timers.advance(10_000);
    expect(calls).toHaveLength(1);
    expect(errors.map((e) => e.phase)).toEqual(["heartbeat"]);
    down = false;
    // Backoff with random 0.5: the retry goes out within a second, not 10 s later.
    await timers.advance(1_000);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.body.progress).toBe(0.3);
    expect(lease.signal.aborted).toBe(false);
  });

  it("aborts ctx.signal with LeaseLostError once heartbeats have failed past the lease's end (a partition)", async () => {
    const { timers, calls, lease, errors } = setup(() => ({ status: 503, body: { error: { code: "Unavailable", message: "unreachable" } } }));
    lease.startHeartbeats();
    await timers.advance(29_000);
    expect(lease.signal.aborted).toBe(false);
    // Failed heartbeats are retried at most 5 s apart (the backoff's cap), so one lands past 30 s.
    await timers.advance(5_000);
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(lease.signal.reason).toMatchObject({ code: "LeaseExpired" });
    expect(errors.map((e) => e.phase)).toEqual(["heartbeat"]);
    // No more heartbeats, and no report: the job belongs to the queue again.
    const sent = calls.length;
    await timers.advance(60_000);
    expect(await lease.report({ kind: "complete", output: 1 })).toBeUndefined();
    expect(calls).toHaveLength(sent);
  });

  it("fails the job, not retryable, when the server refuses the output as too large (413)", async () => {
    const { calls, lease, errors } = setup((c) =>
      c.path.endsWith("/complete") ? { status: 413, body: { error: { code: "MessageTooLong", message: "The output is 2000000 bytes of JSON; at most 1048576 are kept." } } } : { status: 200, body: { job: {} } },
    );
    expect(await lease.report({ kind: "complete", output: "big" })).toBe("fail");
    expect(calls.map((c) => [c.path, c.body])).toEqual([
      ["/v1/jobs/j1/complete", { leaseId: "L1", output: "big" }],
      [
        "/v1/jobs/j1/fail",
        {
          leaseId: "L1",
          error: { message: "the server refused the handler's output: The output is 2000000 bytes of JSON; at most 1048576 are kept.", type: "MessageTooLong" },
          retryable: false,
        },
      ],
    ]);
    expect(errors).toEqual([]);
  });

  it("releases through the release route; on a server without it, through fail", async () => {
    const current = setup(() => ({ status: 200, body: { job: {} } }));
    expect(await current.lease.release()).toBe(true);
    expect(current.calls.map((c) => [c.path, c.body])).toEqual([["/v1/jobs/j1/release", { leaseId: "L1" }]]);

    // Fastify's own 404 for an unknown route: not JobNotFound.
    const old = setup((c) => (c.path.endsWith("/release") ? { status: 404, body: { message: "Route POST:/v1/jobs/j1/release not found", error: "Not Found", statusCode: 404 } } : { status: 200, body: { job: {} } }));
    expect(await old.lease.release()).toBe(true);
    expect(old.calls.map((c) => c.path)).toEqual(["/v1/jobs/j1/release", "/v1/jobs/j1/fail"]);
    expect(old.calls[1]!.body).toMatchObject({ retryable: true, retryAfterSeconds: 0, error: { type: "WorkerShutdown" } });

    const gone = setup(() => ({ status: 404, body: { error: { code: "JobNotFound", message: "no such job" } } }));
    expect(await gone.lease.release()).toBe(false);
    expect(gone.calls.map((c) => c.path)).toEqual(["/v1/jobs/j1/release"]);
    expect(gone.errors.map((e) => e.phase)).toEqual(["release"]);
  });

  it("reports complete and fail to their routes with the lease id", async () => {
    const { calls, lease } = setup(() => ({ status: 200, body: { job: {} } }));
    await lease.report({ kind: "complete", output: { a: 1 } });
    await lease.report({ kind: "fail", failure: { error: { message: "m", type: "T" }, retryable: false } });
    expect(calls.map((c) => [c.path, c.body])).toEqual([
      ["/v1/jobs/j1/complete", { leaseId: "L1", output: { a: 1 } }],
      ["/v1/jobs/j1/fail", { leaseId: "L1", error: { message: "m", type: "T" }, retryable: false }],
    ]);
  });
});
