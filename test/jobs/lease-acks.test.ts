/**
 * POST /v1/queues/{queue}/leases carrying finished jobs' outcomes (complete / fail), over HTTP on a
 * real server: applied before the lease, each answered on its own, a malformed one refusing the
 * whole request with nothing written.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { within } from "../support/wait.js";
import { type Json, type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer;
beforeEach(async () => {
  s = await startJobsServer();
});
afterEach(async () => {
  await s.stop();
});

async function submit(queue: string, input: unknown, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await s.api("POST", `/v1/queues/${queue}/jobs`, { input, ...extra });
  expect(res.status).toBe(201);
  return res.body.job.id;
}

async function leaseAll(queue: string, max = 10): Promise<Array<{ id: string; leaseId: string }>> {
  return (await s.api("POST", `/v1/queues/${queue}/leases`, { max })).body.jobs;
}

const status = async (id: string): Promise<Json> => (await s.api("GET", `/v1/jobs/${id}`)).body.job;

describe("leases with acks", () => {
  it("completes a job and leases the next in one request; a held wait is woken", async () => {
    const a = await submit("q", "a");
    const [leasedA] = await leaseAll("q");
    const b = await submit("q", "b");
    const waiting = s.api("GET", `/v1/jobs/${a}?wait=60`);
    const res = await s.api("POST", "/v1/queues/q/leases", { max: 1, complete: [{ id: a, leaseId: leasedA!.leaseId, output: { label: "ok" } }] });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([{ id: a, ok: true }]);
    expect(res.body.jobs.map((j: Json) => [j.id, j.status, j.attempt])).toEqual([[b, "running", 1]]);
    expect((await within(5_000, waiting, "GET ?wait")).body.job).toMatchObject({ status: "succeeded", output: { label: "ok" } });
  });

  it("answers each ack on its own, complete entries first, with the single routes' codes", async () => {
    const ids = [await submit("q", 1), await submit("q", 2), await submit("q", 3, { maxAttempts: 1 }), await submit("q", 4)];
    const leased = await leaseAll("q");
    const lease = (id: string): string => leased.find((j) => j.id === id)!.leaseId;
    await s.api("POST", `/v1/jobs/${ids[1]}/complete`, { leaseId: lease(ids[1]!) });
    const res = await s.api("POST", "/v1/queues/q/leases", {
      max: 5,
      complete: [
        { id: ids[0], leaseId: lease(ids[0]!), output: 10 },
        { id: ids[1], leaseId: lease(ids[1]!) }, // already succeeded
        { id: "00000000-0000-4000-8000-000000000000", leaseId: lease(ids[0]!) },
        { id: ids[3], leaseId: `${lease(ids[3]!).split(".")[0]}.not-the-lease` },
      ],
      fail: [
        { id: ids[2], leaseId: lease(ids[2]!), error: { message: "bad input", type: "ValueError" } },
        { id: ids[3], leaseId: lease(ids[3]!), error: { message: "503 from model" }, retryAfterSeconds: 30 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: Json) => [r.id, r.ok, r.error?.code])).toEqual([
      [ids[0], true, undefined],
      [ids[1], false, "JobAlreadyFinished"],
      ["00000000-0000-4000-8000-000000000000", false, "JobNotFound"],
      [ids[3], false, "LeaseMismatch"],
      [ids[2], true, undefined],
      [ids[3], true, undefined],
    ]);
    expect(res.body.jobs).toEqual([]); // job 4 waits out its 30 s retry delay
    expect(await status(ids[0]!)).toMatchObject({ status: "succeeded", output: 10 });
    expect(await status(ids[2]!)).toMatchObject({ status: "failed", error: { message: "bad input", type: "ValueError" } });
    expect(await status(ids[3]!)).toMatchObject({ status: "queued", availableAt: new Date(s.clock.nowMs() + 30_000).toISOString() });
    expect((await s.api("GET", "/v1/queues/q")).body.queue.stats.deadLetterMessages).toBe(1);
  });

  it("with acks the lease doesn't wait; max 0 reports acks only", async () => {
    const a = await submit("q", "a");
    const [leased] = await leaseAll("q");
    const res = await within(5_000, s.api("POST", "/v1/queues/q/leases", { max: 1, waitSeconds: 20, batchWindowMs: 1_000, complete: [{ id: a, leaseId: leased!.leaseId }] }), "lease with acks");
    expect(res.body).toEqual({ jobs: [], results: [{ id: a, ok: true }] });

    const b = await submit("q", "b");
    const [leasedB] = await leaseAll("q");
    await submit("q", "c");
    const only = await s.api("POST", "/v1/queues/q/leases", { max: 0, fail: [{ id: b, leaseId: leasedB!.leaseId, error: { message: "x" }, retryable: false }] });
    expect(only.body).toEqual({ jobs: [], results: [{ id: b, ok: true }] });
    expect((await leaseAll("q")).length).toBe(1); // c was left queued
    // Without acks, max 0 is meaningless; empty ack lists are a plain lease.
    expect((await s.api("POST", "/v1/queues/q/leases", { max: 0 })).body.error.code).toBe("ValidationFailed");
    expect((await s.api("POST", "/v1/queues/q/leases", { complete: [], fail: [] })).body).toEqual({ jobs: [], results: [] });
  });

  it("a malformed ack refuses the whole request and changes nothing", async () => {
    const a = await submit("q", "a");
    const b = await submit("q", "b");
    const leased = await leaseAll("q");
    const ok = { id: a, leaseId: leased[0]!.leaseId, output: 1 };
    const bad: Array<[Json, number, string, RegExp]> = [
      [{ complete: [ok, { id: b, leaseId: leased[1]!.leaseId, outptu: 1 }] }, 400, "ValidationFailed", /complete\[1\]\.outptu/],
      [{ complete: [ok, { id: b }] }, 400, "ValidationFailed", /leaseId/],
      [{ complete: [ok], fail: [{ id: b, leaseId: leased[1]!.leaseId, error: { message: "x".repeat(8193) } }] }, 400, "ValidationFailed", /message/],
      [{ complete: [ok], fail: [{ id: b, leaseId: leased[1]!.leaseId, error: { message: "x" }, retryAfterSeconds: -1 }] }, 400, "ValidationFailed", /retryAfterSeconds/],
      [{ complete: [ok, { id: b, leaseId: leased[1]!.leaseId, output: "x".repeat(1_048_577) }] }, 413, "MessageTooLong", /output/],
      [{ complete: Array.from({ length: 101 }, () => ok) }, 400, "ValidationFailed", /100/],
      [{ complete: Array.from({ length: 60 }, () => ok), fail: Array.from({ length: 41 }, () => ({ id: b, leaseId: leased[1]!.leaseId, error: { message: "x" } })) }, 400, "ValidationFailed", /100/],
    ];
    for (const [body, code, errorCode, message] of bad) {
      const res = await s.api("POST", "/v1/queues/q/leases", { max: 1, ...body });
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(code);
      expect(res.body.error.code).toBe(errorCode);
      expect(res.body.error.message).toMatch(message);
    }
    expect((await status(a)).status).toBe("running");
    expect((await status(b)).status).toBe("running");
  });

  it("is documented in /openapi.json", async () => {
    const doc = (await s.api("GET", "/openapi.json")).body;
    const body = doc.paths["/v1/queues/{queue}/leases"].post.requestBody.content["application/json"].schema;
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(["complete", "fail"]));
    expect(doc.components.schemas.AckResult).toBeDefined();
  });
});
