/**
 * POST /v1/queues/{queue}/jobs?wait=N over HTTP on a real server (manual clock): submit and hold
 * the answer until the job is terminal or N seconds pass — woken by the completion, not by time.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor, within } from "../support/wait.js";
import { type ApiAnswer, type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer;
beforeEach(async () => {
  s = await startJobsServer();
});
afterEach(async () => {
  await s.stop();
});

/** Leases the one job a held submit created (the long poll is woken by the submit itself). */
async function leaseOne(queue: string): Promise<{ id: string; leaseId: string }> {
  const res = await s.api("POST", `/v1/queues/${queue}/leases`, { waitSeconds: 20 });
  expect(res.body.jobs).toHaveLength(1);
  return res.body.jobs[0];
}

/** Resolves once the server has armed one more timer than `before` (a hold's time limit). */
async function holdArmed(before: number): Promise<void> {
  await waitFor(() => s.clock.pendingTimers() > before, { what: "the hold's timer" });
}

describe("POST /v1/queues/{queue}/jobs?wait=N", () => {
  it("answers 201 with the finished job once a worker completes it", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    let settled = false;
    const held = s.api("POST", "/v1/queues/q/jobs?wait=30", { input: { text: "hi" } }).finally(() => (settled = true));
    const leased = await leaseOne("q");
    expect(settled).toBe(false);
    const done = await s.api("POST", `/v1/jobs/${leased.id}/complete`, { leaseId: leased.leaseId, output: { label: "positive" } });
    expect(done.status).toBe(200);
    const res = await within(5_000, held, "held submit");
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/v1/jobs/${leased.id}`);
    expect(res.body.job).toMatchObject({ id: leased.id, status: "succeeded", input: { text: "hi" }, output: { label: "positive" }, attempt: 1 });
  });

  it("answers with the job as it is when N seconds pass first", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const before = s.clock.pendingTimers();
    const held = s.api("POST", "/v1/queues/q/jobs?wait=5", { input: 1 });
    await holdArmed(before);
    s.clock.advance(5_000);
    const res = await within(5_000, held, "held submit");
    expect(res.status).toBe(201);
    expect(res.body.job).toMatchObject({ status: "queued", input: 1 });
    expect((await s.api("GET", `/v1/jobs/${res.body.job.id}`)).body.job.status).toBe("queued");
  });

  it("a failure that ends the job (not retryable) also ends the hold", async () => {
    await s.api("PUT", "/v1/queues/q", {});
    const held = s.api("POST", "/v1/queues/q/jobs?wait=30", { input: 1 });
    const leased = await leaseOne("q");
    await s.api("POST", `/v1/jobs/${leased.id}/fail`, { leaseId: leased.leaseId, error: { message: "bad input" }, retryable: false });
    expect((await within(5_000, held, "held submit")).body.job).toMatchObject({ status: "failed", error: { message: "bad input" } });
  });

  it("an Idempotency-Key replay answers 200 and holds on the earlier job", async () => {
    const body = { input: { a: 1 } };
    const first = await s.api("POST", "/v1/queues/q/jobs", body, { "Idempotency-Key": "k-1" });
    expect(first.status).toBe(201);
    const held = s.api("POST", "/v1/queues/q/jobs?wait=30", body, { "Idempotency-Key": "k-1" });
    const leased = await leaseOne("q");
    expect(leased.id).toBe(first.body.job.id);
    await s.api("POST", `/v1/jobs/${leased.id}/complete`, { leaseId: leased.leaseId, output: 2 });
    const replay: ApiAnswer = await within(5_000, held, "held replay");
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.job).toMatchObject({ id: first.body.job.id, status: "succeeded", output: 2 });
    // The job is terminal now: a replay answers at once; another body is still refused.
    expect((await s.api("POST", "/v1/queues/q/jobs?wait=60", body, { "Idempotency-Key": "k-1" })).body.job.status).toBe("succeeded");
    expect((await s.api("POST", "/v1/queues/q/jobs?wait=60", { input: 3 }, { "Idempotency-Key": "k-1" })).body.error.code).toBe("IdempotencyKeyReused");
    expect((await s.api("GET", "/v1/queues/q")).body.queue.stats.jobs.succeeded).toBe(1);
  });

  it("wait=0 answers at once, as a plain submit", async () => {
    const res = await s.api("POST", "/v1/queues/q/jobs?wait=0", { input: 1 });
    expect([res.status, res.body.job.status]).toEqual([201, "queued"]);
  });

  it("rejects a bad wait with ValidationFailed, submitting nothing", async () => {
    for (const wait of ["61", "-1", "1.5", "soon"]) {
      const res = await s.api("POST", `/v1/queues/q/jobs?wait=${wait}`, { input: 1 });
      expect(res.status, wait).toBe(400);
      expect(res.body.error.code).toBe("ValidationFailed");
      expect(res.body.error.message).toMatch(/wait/);
    }
    expect((await s.api("GET", "/v1/queues/q")).status).toBe(404); // nothing was created
  });

  it("is documented in /openapi.json", async () => {
    const op = (await s.api("GET", "/openapi.json")).body.paths["/v1/queues/{queue}/jobs"].post;
    expect(op.parameters).toContainEqual(expect.objectContaining({ name: "wait", in: "query" }));
  });
});
