/** The jobs API over HTTP on a real listening server (manual clock): the contract of docs/jobs-api.md. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { routeSpecs } from "../../src/protocols/jobs/route-specs.js";
import { repoRoot } from "../support/cli.js";
import { waitFor, within } from "../support/wait.js";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { type Json, type JobsServer, openEventStream, startJobsServer } from "./http-harness.js";
import { openApiCoverage } from "./openapi-coverage.js";

let s: JobsServer;
beforeEach(async () => {
  // The attachments quota's 429 is answered below (no other case here stores attachments).
  s = await startJobsServer({ maxBlobBytes: 1000 });
});
afterEach(async () => {
  await s.stop();
});

const jobKeys = [
  "id", "queue", "status", "input", "output", "error", "attempt", "maxAttempts", "priority", "progress", "createdAt", "startedAt", "finishedAt",
  "updatedAt", "idempotencyKey", "metadata", "cancelRequested", "timeoutSeconds", "availableAt", "leaseExpiresAt", "webhook",
  "tenant", "requires", "dependsOn", "onParentFailure",
].sort();

/**
 * Waits (bounded) until the server holds one long-polling lease. A submit only hands its job to a
 * lease already waiting; one that arrives first finds the job still queued.
 */
async function leaseParked(): Promise<void> {
  await waitFor(() => s.server.queues.waiters.waiterCount() === 1, { what: "the long-polling lease to wait on the server" });
}

async function lease(queue: string, body: Record<string, unknown> = {}) {
  const res = await s.api("POST", `/v1/queues/${queue}/leases`, body);
  expect(res.status).toBe(200);
  return res.body.jobs as Array<{ id: string; leaseId: string; attempt: number }>;
}

describe("jobs API: submit and idempotency", () => {
  it("201 with Location and the documented job shape", async () => {
    const res = await s.api("POST", "/v1/queues/embed/jobs", { input: { text: "hi" }, priority: 5, metadata: { user: "u1" }, timeoutSeconds: 60 });
    expect(res.status).toBe(201);
    const job = res.body.job;
    expect(res.headers.get("location")).toBe(`/v1/jobs/${job.id}`);
    expect(Object.keys(job).sort()).toEqual(jobKeys);
    expect(job).toMatchObject({ queue: "embed", status: "queued", input: { text: "hi" }, output: null, error: null, attempt: 0, maxAttempts: 3, priority: 5, metadata: { user: "u1" }, timeoutSeconds: 60, idempotencyKey: null });
    expect(job.createdAt).toBe(new Date(s.clock.nowMs()).toISOString());
    const got = await s.api("GET", `/v1/jobs/${job.id}`);
    expect(got.status).toBe(200);
    expect(got.body.job).toEqual({ ...job, webhookDeliveries: [] });
  });

  it("replays the same key and body with 200 and Idempotent-Replayed: true; 422 for another body", async () => {
    const body = { input: { a: 1 }, priority: 2 };
    const first = await s.api("POST", "/v1/queues/q/jobs", body, { "Idempotency-Key": "abc-123" });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const replay = await s.api("POST", "/v1/queues/q/jobs", { priority: 2, input: { a: 1 } }, { "Idempotency-Key": '"abc-123"' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.job.id).toBe(first.body.job.id);
    expect(replay.body.job.idempotencyKey).toBe("abc-123");
    const reused = await s.api("POST", "/v1/queues/q/jobs", { input: { a: 2 } }, { "Idempotency-Key": "abc-123" });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe("IdempotencyKeyReused");
    expect((await s.api("GET", "/v1/queues/q")).body.queue.stats.jobs.queued).toBe(1);
    const escaped = await s.api("POST", "/v1/queues/q/jobs", body, { "Idempotency-Key": '"a\\"b"' });
    expect([escaped.status, escaped.body.job.idempotencyKey]).toEqual([201, 'a"b']);
  });

  it("rejects bad requests with ValidationFailed and a specific message, writing nothing", async () => {
    const cases: Array<[unknown, Record<string, string>, number, RegExp]> = [
      [{ input: 1, maxAttempt: 3 }, {}, 400, /maxAttempt/],
      [{ input: 1, priority: 10 }, {}, 400, /priority/],
      [{ priority: 1 }, {}, 400, /input/],
      [{ input: 1, webhook: { url: "https://x.example", events: ["job.progress"] } }, {}, 400, /events/],
      [{ input: 1 }, { "Idempotency-Key": "" }, 400, /idempotency-key/i],
      [{ input: 1 }, { "Idempotency-Key": '"a"b"' }, 400, /structured-field string/], // an unescaped quote inside
      ["not json", {}, 400, /JSON|json/],
      // JSON bodies are not coerced: a string, an array, a boolean or null of the wrong type is refused.
      [{ input: 1, priority: "7" }, {}, 400, /priority must be integer/],
      [{ input: 1, priority: [5] }, {}, 400, /priority must be integer/],
      [{ input: 1, maxAttempts: true }, {}, 400, /maxAttempts must be integer/],
      [{ input: 1, delaySeconds: null }, {}, 400, /delaySeconds must be integer/],
      [{ input: 1, webhook: { url: "https://x.example", events: "job.failed" } }, {}, 400, /events must be array/],
    ];
    for (const [body, headers, status, message] of cases) {
      const res = await s.api("POST", "/v1/queues/q/jobs", body, headers);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.code).toBe("ValidationFailed");
      expect(res.body.error.message).toMatch(message);
    }
    const text = await fetch(`${s.url}/v1/queues/q/jobs`, { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" });
    expect(text.status).toBe(415);
    expect((await s.api("GET", "/v1/queues/q")).status).toBe(404); // nothing was created
  });
});

describe("jobs API: refusals change nothing; a queue deleted through SQS", () => {
  it("a refused submit or PUT creates neither the queue nor its dead-letter queue", async () => {
    const refusals: Array<[string, string, unknown, number, string]> = [
      ["PUT", "/v1/queues/fresh1", { backoff: { baseSeconds: 10, capSeconds: 5 } }, 400, "ValidationFailed"],
      ["POST", "/v1/queues/fresh2/jobs", { input: "x".repeat(1_048_577) }, 413, "MessageTooLong"],
      ["POST", "/v1/queues/fresh3/jobs", { input: "\uffff" }, 400, "InvalidMessageContents"],
    ];
    for (const [method, path, body, status, code] of refusals) {
      const res = await s.api(method, path, body);
      expect([res.status, res.body.error.code], path).toEqual([status, code]);
    }
    for (const name of ["fresh1", "fresh2", "fresh3"]) {
      expect((await s.api("GET", `/v1/queues/${name}`)).status, name).toBe(404);
      expect((await s.api("GET", `/v1/queues/${name}-dlq`)).status, `${name}-dlq`).toBe(404);
    }
  });

  it("submit and PUT right after an SQS DeleteQueue answer 409 QueueDeletedRecently, not 500; a minute later they re-create it", async () => {
    const sqsDelete = (name: string) =>
      fetch(`${s.url}/`, {
        method: "POST",
        headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.DeleteQueue" },
        body: JSON.stringify({ QueueUrl: `${s.url}/000000000000/${name}` }),
      });
    expect((await s.api("POST", "/v1/queues/gone/jobs", { input: 1 })).status).toBe(201);
    expect((await s.api("PUT", "/v1/queues/gone2", { maxAttempts: 5 })).status).toBe(200);
    expect((await sqsDelete("gone")).status).toBe(200);
    expect((await sqsDelete("gone2")).status).toBe(200);
    const submit = await s.api("POST", "/v1/queues/gone/jobs", { input: 2 });
    expect([submit.status, submit.body.error?.code]).toEqual([409, "QueueDeletedRecently"]);
    const put = await s.api("PUT", "/v1/queues/gone2", { maxAttempts: 6 });
    expect([put.status, put.body.error?.code]).toEqual([409, "QueueDeletedRecently"]);
    s.clock.advance(61_000);
    expect((await s.api("POST", "/v1/queues/gone/jobs", { input: 3 })).status).toBe(201);
    expect((await s.api("PUT", "/v1/queues/gone2", { maxAttempts: 6 })).body.queue.settings.maxAttempts).toBe(6);
  });
});

describe("jobs API: empty bodies (Content-Type: application/json and nothing sent, as curl, axios and fetch wrappers do)", () => {
  const json = { "content-type": "application/json" };
  const pathOf = (path: string, id: string, queue: string) => path.replace("{id}", id).replace("{queue}", queue).replace("{name}", "s");

  it("a route that takes no body reads an empty JSON body as no body: cancel, pause, resume and delete answer", async () => {
    // Every POST/PUT/DELETE route without a body schema; a new one gets covered here by adding its case.
    // (PUT /v1/blobs/{id}/bytes takes raw bytes: test/jobs-e2e/attachments.test.ts.)
    expect(routeSpecs.filter((r) => r.method !== "GET" && r.body === undefined).map((r) => r.operationId).sort()).toEqual(["cancelBatch", "cancelJob", "deleteFile", "deleteSchedule", "pauseSchedule", "putBlobBytes", "resumeSchedule", "uploadFile"]);
    expect((await s.api("POST", "/v1/batches/batch_nope/cancel", "", json)).body.error.code).toBe("ResourceNotFound");
    expect((await s.api("DELETE", "/v1/files/file-nope", "", json)).body.error.code).toBe("ResourceNotFound");
    expect((await s.api("POST", "/v1/files", "", json)).body.error.message).toMatch(/multipart\/form-data/);
    await s.api("PUT", "/v1/schedules/s", { queue: "q", everySeconds: 60, input: 1 });
    expect((await s.api("POST", "/v1/schedules/s/pause", "", json)).body.schedule.paused).toBe(true);
    expect((await s.api("POST", "/v1/schedules/s/resume", "", json)).body.schedule.paused).toBe(false);
    expect((await s.api("DELETE", "/v1/schedules/s", "", json)).status).toBe(204);
    const queued = (await s.api("POST", "/v1/queues/q/jobs", { input: "a" })).body.job;
    const canceled = await s.api("POST", `/v1/jobs/${queued.id}/cancel`, "", json);
    expect([canceled.status, canceled.body.job?.status]).toEqual([200, "canceled"]);
    const running = (await s.api("POST", "/v1/queues/q/jobs", { input: "b" })).body.job;
    expect((await lease("q"))[0]!.id).toBe(running.id);
    const requested = await s.api("POST", `/v1/jobs/${running.id}/cancel`, "", json);
    expect([requested.status, requested.body.job?.cancelRequested]).toEqual([200, true]);
  });

  it("a route that takes no body still refuses a body that is not JSON, or is poisoned", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: "a" })).body.job;
    for (const body of ["{bad", '{"__proto__":{"admin":true}}']) {
      const res = await s.api("POST", `/v1/jobs/${job.id}/cancel`, body, json);
      expect([res.status, res.body.error?.code], body).toEqual([400, "ValidationFailed"]);
    }
    expect((await s.api("GET", `/v1/jobs/${job.id}`)).body.job.status).toBe("queued");
  });

  it("a route that takes a body answers an empty one, as a missing one, with a specific ValidationFailed, writing nothing", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: "a" })).body.job;
    const withBody = routeSpecs.filter((r) => r.body !== undefined);
    expect(withBody.map((r) => r.operationId).sort()).toEqual(["completeJob", "createBatch", "createBlob", "failJob", "heartbeatJob", "leaseJobs", "outputJob", "putSchedule", "releaseJob", "submitJob", "submitJobs", "updateQueue"]);
    for (const route of withBody) {
      const path = pathOf(route.path, job.id, route.operationId === "updateQueue" ? "fresh" : "q");
      for (const [body, headers] of [["", json], [undefined, {}]] as const) {
        const res = await s.api(route.method, path, body, headers);
        const what = `${route.operationId} with ${body === undefined ? "no body" : "an empty JSON body"}`;
        expect([res.status, res.body.error?.code], what).toEqual([400, "ValidationFailed"]);
        expect(res.body.error.message, what).toMatch(/^The request has no body: send a JSON object/);
      }
    }
    // Where every field is optional, the answer says how to send none of them.
    expect((await s.api("PUT", "/v1/queues/fresh", "", json)).body.error.message).toMatch(/\{\} to leave every field at its default/);
    expect((await s.api("GET", "/v1/queues/fresh")).status).toBe(404); // the PUT created nothing
    expect((await s.api("GET", `/v1/jobs/${job.id}`)).body.job).toMatchObject({ status: "queued", attempt: 0 }); // nor did a lease take it
    const put = await s.api("PUT", "/v1/queues/fresh", {});
    expect([put.status, put.body.queue?.settings.maxAttempts]).toEqual([200, 3]); // {}: created with the defaults
  });
});

describe("jobs API: workers", () => {
  it("leases by priority, heartbeats, completes; GET ?wait is woken by the completion", async () => {
    const low = (await s.api("POST", "/v1/queues/q/jobs", { input: "low", priority: 1 })).body.job;
    const high = (await s.api("POST", "/v1/queues/q/jobs", { input: "high", priority: 8 })).body.job;
    const waiting = s.api("GET", `/v1/jobs/${high.id}?wait=60`);
    const leased = await lease("q", { max: 10, leaseSeconds: 30 });
    expect(leased.map((j) => j.id)).toEqual([high.id, low.id]);
    expect(leased[0]).toMatchObject({ status: "running", attempt: 1, leaseExpiresAt: new Date(s.clock.nowMs() + 30_000).toISOString() });
    const beat = await s.api("POST", `/v1/jobs/${high.id}/heartbeat`, { leaseId: leased[0]!.leaseId, progress: 0.5 });
    expect(beat.body).toEqual({ cancelRequested: false, leaseExpiresAt: new Date(s.clock.nowMs() + 30_000).toISOString() });
    const done = await s.api("POST", `/v1/jobs/${high.id}/complete`, { leaseId: leased[0]!.leaseId, output: { label: "positive" } });
    expect(done.body.job).toMatchObject({ status: "succeeded", output: { label: "positive" }, progress: 0.5 });
    const waited = await within(5_000, waiting, "GET ?wait");
    expect(waited.body.job).toMatchObject({ status: "succeeded", output: { label: "positive" } });
    const again = await s.api("POST", `/v1/jobs/${high.id}/complete`, { leaseId: leased[0]!.leaseId });
    expect([again.status, again.body.error.code, again.body.error.message]).toEqual([409, "JobAlreadyFinished", `Job ${high.id} has already succeeded.`]);
  });

  it("the jobs of one lease request share its leaseId: a lease is job id + leaseId, and a job leased again gets a new one", async () => {
    const [a, b, c] = await Promise.all([1, 2, 3].map(async (n) => (await s.api("POST", "/v1/queues/q/jobs", { input: n, priority: 9 - n })).body.job.id as string));
    const together = await lease("q", { max: 2 });
    expect(together.map((j) => j.id)).toEqual([a, b]);
    const shared = together[0]!.leaseId;
    expect(together[1]!.leaseId).toBe(shared);
    const [alone] = await lease("q");
    expect(alone!.id).toBe(c);
    expect(alone!.leaseId).not.toBe(shared);
    // The shared leaseId acts on the jobs it came with, each named by its id, and on no other.
    const wrongJob = await s.api("POST", `/v1/jobs/${c}/complete`, { leaseId: shared });
    expect([wrongJob.status, wrongJob.body.error.code]).toEqual([409, "LeaseMismatch"]);
    expect((await s.api("POST", `/v1/jobs/${a}/complete`, { leaseId: shared })).status).toBe(200);
    expect((await s.api("POST", `/v1/jobs/${b}/release`, { leaseId: shared })).status).toBe(200);
    const [again] = await lease("q");
    expect(again!.id).toBe(b);
    expect(again!.leaseId).not.toBe(shared);
    const stale = await s.api("POST", `/v1/jobs/${b}/complete`, { leaseId: shared });
    expect([stale.status, stale.body.error.code]).toEqual([409, "LeaseMismatch"]);
  });

  it("a long-polling lease is answered by the next submit", async () => {
    await lease("q");
    const polling = s.api("POST", "/v1/queues/q/leases", { waitSeconds: 20 });
    await leaseParked();
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: 1 })).body.job;
    const res = await within(5_000, polling, "long-polling lease");
    expect(res.body.jobs.map((j: { id: string }) => j.id)).toEqual([job.id]);
    expect([job.status, job.attempt]).toEqual(["running", 1]); // the submit's answer: as the job is after its write
  });

  it("cancel: queued at once; running via cancelRequested on the next heartbeat, then canceled", async () => {
    const a = (await s.api("POST", "/v1/queues/q/jobs", { input: "a" })).body.job;
    const canceled = await s.api("POST", `/v1/jobs/${a.id}/cancel`);
    expect(canceled.body.job.status).toBe("canceled");
    const b = (await s.api("POST", "/v1/queues/q/jobs", { input: "b" })).body.job;
    const [leased] = await lease("q");
    expect(leased!.id).toBe(b.id);
    expect((await s.api("POST", `/v1/jobs/${b.id}/cancel`, {})).body.job).toMatchObject({ status: "running", cancelRequested: true });
    expect((await s.api("POST", `/v1/jobs/${b.id}/heartbeat`, { leaseId: leased!.leaseId })).body.cancelRequested).toBe(true);
    const ended = await s.api("POST", `/v1/jobs/${b.id}/fail`, { leaseId: leased!.leaseId, error: { message: "canceled by user" } });
    expect(ended.body.job.status).toBe("canceled");
  });

  it("a non-retryable failure fails the job after one attempt and dead-letters its message", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: "x" })).body.job;
    const [leased] = await lease("q");
    const failed = await s.api("POST", `/v1/jobs/${job.id}/fail`, { leaseId: leased!.leaseId, error: { message: "bad input", type: "ValueError" }, retryable: false });
    expect(failed.body.job).toMatchObject({ status: "failed", attempt: 1, error: { message: "bad input", type: "ValueError" } });
    const queue = (await s.api("GET", "/v1/queues/q")).body.queue;
    expect(queue).toMatchObject({ deadLetterQueue: "q-dlq", stats: { jobs: { failed: 1 }, deadLetterMessages: 1 } });
    const stale = await s.api("POST", `/v1/jobs/${job.id}/heartbeat`, { leaseId: "1.nottheleaseatall" });
    expect([stale.status, stale.body.error.code, stale.body.error.message]).toEqual([409, "JobAlreadyFinished", `Job ${job.id} has already failed.`]);
    const cancel = await s.api("POST", `/v1/jobs/${job.id}/cancel`);
    expect([cancel.status, cancel.body.error.message]).toEqual([409, `Job ${job.id} has already failed.`]);
    const canceled = (await s.api("POST", "/v1/queues/q/jobs", { input: "y" })).body.job;
    await s.api("POST", `/v1/jobs/${canceled.id}/cancel`);
    const afterCancel = await s.api("POST", `/v1/jobs/${canceled.id}/heartbeat`, { leaseId: "1.nottheleaseatall" });
    expect([afterCancel.status, afterCancel.body.error.message]).toEqual([409, `Job ${canceled.id} was canceled.`]);
  });

  it("a worker's body is not coerced: retryable null is refused and the job keeps its lease", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: "x" })).body.job;
    const [leased] = await lease("q");
    const refused = await s.api("POST", `/v1/jobs/${job.id}/fail`, { leaseId: leased!.leaseId, error: { message: "e" }, retryable: null });
    expect([refused.status, refused.body.error.message]).toEqual([400, "body.retryable must be boolean."]);
    const viaLease = await s.api("POST", "/v1/queues/q/leases", { fail: [{ id: job.id, leaseId: leased!.leaseId, error: { message: "e" }, retryable: null }] });
    expect(viaLease.status).toBe(400);
    const beat = await s.api("POST", `/v1/jobs/${job.id}/heartbeat`, { leaseId: leased!.leaseId, progress: "0.5" });
    expect(beat.status).toBe(400);
    expect((await s.api("GET", `/v1/jobs/${job.id}?wait=0`)).body.job).toMatchObject({ status: "running", attempt: 1, progress: null });
  });

  it("a retryable failure is queued again with availableAt; the old lease answers LeaseExpired", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: "x" })).body.job;
    const [leased] = await lease("q");
    const failed = await s.api("POST", `/v1/jobs/${job.id}/fail`, { leaseId: leased!.leaseId, error: { message: "503 from model" }, retryAfterSeconds: 7 });
    expect(failed.body.job).toMatchObject({ status: "queued", attempt: 1, availableAt: new Date(s.clock.nowMs() + 7_000).toISOString() });
    const late = await s.api("POST", `/v1/jobs/${job.id}/complete`, { leaseId: leased!.leaseId });
    expect([late.status, late.body.error.code]).toEqual([409, "LeaseExpired"]);
    expect(await lease("q")).toEqual([]);
    s.clock.advance(7_000);
    expect((await lease("q"))[0]).toMatchObject({ id: job.id, attempt: 2 });
  });

  it("release hands a lease back unstarted: queued with the attempt given back, and a waiting lease gets it", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: "x", maxAttempts: 1 })).body.job;
    const [leased] = await lease("q");
    const polling = s.api("POST", "/v1/queues/q/leases", { waitSeconds: 20 });
    await leaseParked();
    const released = await s.api("POST", `/v1/jobs/${job.id}/release`, { leaseId: leased!.leaseId });
    expect([released.status, released.body.job.status, released.body.job.attempt]).toEqual([200, "queued", 0]);
    const res = await within(5_000, polling, "long-polling lease");
    expect(res.body.jobs).toMatchObject([{ id: job.id, attempt: 1 }]);
    const stale = await s.api("POST", `/v1/jobs/${job.id}/release`, { leaseId: leased!.leaseId });
    expect([stale.status, stale.body.error.code]).toEqual([409, "LeaseMismatch"]);
    const noLease = await s.api("POST", `/v1/jobs/${job.id}/release`, {});
    expect([noLease.status, noLease.body.error.code]).toEqual([400, "ValidationFailed"]);
  });
});

describe("jobs API: lists, queues, events, OpenAPI", () => {
  it("lists newest first, filters by status and pages with a cursor", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s.api("POST", "/v1/queues/q/jobs", { input: i })).body.job.id);
    await s.api("POST", `/v1/jobs/${ids[0]}/cancel`);
    const page1 = await s.api("GET", "/v1/queues/q/jobs?limit=3");
    expect(page1.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[4], ids[3], ids[2]]);
    const page2 = await s.api("GET", `/v1/queues/q/jobs?limit=3&cursor=${page1.body.nextCursor}`);
    expect(page2.body).toMatchObject({ nextCursor: null });
    expect(page2.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[1], ids[0]]);
    const canceled = await s.api("GET", "/v1/queues/q/jobs?status=canceled");
    expect(canceled.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    expect((await s.api("GET", "/v1/queues/q/jobs?status=bogus")).status).toBe(400);
  });

  it("PUT /v1/queues/{queue} creates the queue and merges settings; GET shows them with live stats", async () => {
    const put = await s.api("PUT", "/v1/queues/emb", { maxAttempts: 5, backoff: { baseSeconds: 2 }, leaseSeconds: 60, timeoutSeconds: 120 });
    expect(put.status).toBe(200);
    expect(put.body.queue).toMatchObject({
      name: "emb",
      deadLetterQueue: "emb-dlq",
      settings: { maxAttempts: 5, backoff: { baseSeconds: 2, capSeconds: 300 }, leaseSeconds: 60, timeoutSeconds: 120, resultTtlSeconds: 604_800, drainTargetSeconds: 300, workerConcurrency: 1 },
      stats: { jobs: { waiting: 0, queued: 0, running: 0, succeeded: 0, failed: 0, canceled: 0 }, messages: { visible: 0, inFlight: 0, delayed: 0 }, deadLetterMessages: 0, oldestVisibleAgeSeconds: null },
    });
    const job = (await s.api("POST", "/v1/queues/emb/jobs", { input: 1 })).body.job;
    expect(job).toMatchObject({ maxAttempts: 5, timeoutSeconds: 120 });
    expect((await lease("emb"))[0]).toMatchObject({ leaseExpiresAt: new Date(s.clock.nowMs() + 60_000).toISOString() });
    expect((await s.api("PUT", "/v1/queues/emb", { timeoutSeconds: null })).body.queue.settings.timeoutSeconds).toBeNull();
    expect((await s.api("PUT", "/v1/queues/emb", { backoff: { baseSeconds: 10, capSeconds: 5 } })).status).toBe(400);
    expect((await s.api("GET", "/v1/queues/nope")).status).toBe(404);
  });

  it("streams a job's events over SSE: snapshot, started, progress, succeeded, then the stream ends", async () => {
    const job = (await s.api("POST", "/v1/queues/q/jobs", { input: 1 })).body.job;
    const stream = await openEventStream(`${s.url}/v1/jobs/${job.id}/events`);
    const all = await openEventStream(`${s.url}/v1/events?queue=q`);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    expect(await stream.next()).toMatchObject({ event: "job.snapshot", data: { type: "job.snapshot", job: { id: job.id, status: "queued" } } });
    const [leased] = await lease("q");
    await s.api("POST", `/v1/jobs/${job.id}/heartbeat`, { leaseId: leased!.leaseId, progress: 0.25 });
    await s.api("POST", `/v1/jobs/${job.id}/complete`, { leaseId: leased!.leaseId, output: "ok" });
    const events: string[] = [];
    for (let e = await within(5_000, stream.next()); e; e = await within(5_000, stream.next())) events.push(e.event);
    expect(events).toEqual(["job.started", "job.progress", "job.succeeded"]);
    const fromAll = [];
    for (let i = 0; i < 3; i++) fromAll.push((await within(5_000, all.next()))!);
    expect(fromAll.map((e) => e.event)).toEqual(["job.started", "job.progress", "job.succeeded"]);
    expect(fromAll[2]!.data.job).toMatchObject({ id: job.id, status: "succeeded", output: "ok" });
    expect((await s.api("GET", "/v1/jobs/nope/events")).status).toBe(404);
    // `all` is left open: shutdown ends every stream (a client abort would leave undici's spare socket open for 4 s).
  });

  it("an event whose job input has line breaks (a body sent through SQS) stays one event over SSE", async () => {
    await lease("adopt"); // creates the job queue
    const all = await openEventStream(`${s.url}/v1/events?queue=adopt`);
    const body = '{\n  "text": "hello"\r\n}\n';
    const sent = await fetch(`${s.url}/`, {
      method: "POST",
      headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.SendMessage" },
      body: JSON.stringify({ QueueUrl: `${s.url}/000000000000/adopt`, MessageBody: body }),
    });
    expect(sent.status).toBe(200);
    const [leased] = await lease("adopt");
    const event = await within(5_000, all.next());
    expect(event).toMatchObject({ event: "job.started", data: { job: { id: leased!.id, input: { text: "hello" } } } });
    await s.api("POST", `/v1/jobs/${leased!.id}/complete`, { leaseId: leased!.leaseId });
    expect((await within(5_000, all.next()))?.event).toBe("job.succeeded"); // the next event, not a fragment
  });

  it("real answers match /openapi.json: every status a route answers is listed for it, with a body its schema admits, and every listed status is answered", async () => {
    const doc = (await s.api("GET", "/openapi.json")).body;
    expect(doc.info.version).toBe((JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version);
    // s.api itself fails on an answer whose status /openapi.json does not list for its route, or
    // whose body its schema refuses (openapi-answers.ts); check also pins the status expected.
    const { check, checkStream, unanswered } = openApiCoverage(s, doc);
    const sqsDeleteQueue = async (name: string) => {
      const res = await fetch(`${s.url}/`, {
        method: "POST",
        headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.DeleteQueue" },
        body: JSON.stringify({ QueueUrl: `${s.url}/000000000000/${name}` }),
      });
      expect(res.status).toBe(200);
    };
    const tooLong = "x".repeat(1024 * 1024 + 1); // over 1 MiB of JSON: an input or output
    const overBodyLimit = "x".repeat(4 * 1024 * 1024 + 1); // over the 4 MiB request body limit
    const longId = "a".repeat(129); // over the job id's 128 characters (and the router's default 100)
    const text = { "content-type": "text/plain" };

    // submit
    const a = (await check("POST", "/v1/queues/oa/jobs", 201, { input: { a: 1 }, metadata: { m: 1 }, webhook: { url: "http://127.0.0.1:9/h" } }, { "Idempotency-Key": "oa-1" })).job;
    await check("POST", "/v1/queues/oa/jobs", 200, { input: { a: 1 }, metadata: { m: 1 }, webhook: { url: "http://127.0.0.1:9/h" } }, { "Idempotency-Key": "oa-1" });
    await check("POST", "/v1/queues/oa/jobs", 422, { input: { a: 2 } }, { "Idempotency-Key": "oa-1" });
    await check("POST", "/v1/queues/oa/jobs", 400, { input: 1, priority: 99 });
    await check("POST", "/v1/queues/oa/jobs", 413, { input: tooLong });
    await check("POST", "/v1/queues/oa/jobs", 413, { input: overBodyLimit });
    await check("POST", "/v1/queues/oa/jobs", 415, "{}", text);
    // A held submit whose queue is deleted meanwhile; then the name can't be reused for 60 s.
    const held = check("POST", "/v1/queues/oa-gone/jobs?wait=30", 404, { input: 1 });
    await waitFor(async () => (await fetch(`${s.url}/v1/queues/oa-gone/jobs`).then((r) => r.json()) as Json).jobs?.length === 1);
    await sqsDeleteQueue("oa-gone");
    await held;
    await check("POST", "/v1/queues/oa-gone/jobs", 409, { input: 1 });

    // batch submit: JSON without ?wait, NDJSON with it (each checked against its media type's schema)
    await check("POST", "/v1/queues/oc/jobs", 201, { input: 0 }, { "Idempotency-Key": "oc-1" });
    const batch = await check("POST", "/v1/queues/oc/jobs/batch", 200, { jobs: [{ input: 1 }, { input: 2, idempotencyKey: "oc-1" }] });
    expect(batch.results.map((r: Json) => [r.index, r.status, r.error?.code])).toEqual([[0, 201, undefined], [1, 422, "IdempotencyKeyReused"]]);
    await check("PUT", "/v1/queues/ob", 200, {});
    const streamed = check("POST", "/v1/queues/ob/jobs/batch?wait=30", 200, { jobs: [{ input: 1 }] });
    const [leasedO] = (await check("POST", "/v1/queues/ob/leases", 200, { waitSeconds: 20 })).jobs; // woken by the submit
    await check("POST", `/v1/jobs/${leasedO.id}/complete`, 200, { leaseId: leasedO.leaseId, output: 7 });
    expect(await streamed).toMatchObject([{ index: 0, status: 201, job: { id: leasedO.id, status: "succeeded", output: 7 } }]);
    await check("POST", "/v1/queues/oc/jobs/batch", 400, { jobs: [] });
    await check("POST", "/v1/queues/oc/jobs/batch", 413, { jobs: [{ input: overBodyLimit }] });
    await check("POST", "/v1/queues/oc/jobs/batch", 415, "{}", text);

    // get, list, events
    await check("GET", `/v1/jobs/${a.id}`, 200);
    await check("GET", `/v1/jobs/${a.id}?wait=x`, 400);
    await check("GET", "/v1/jobs/nope", 404);
    await check("GET", `/v1/jobs/${longId}`, 400);
    await check("GET", "/v1/queues/oa/jobs", 200);
    await check("GET", "/v1/queues/oa/jobs?cursor=zzz", 400);
    await check("GET", "/v1/queues/never/jobs", 404);
    await checkStream(`/v1/jobs/${a.id}/events`);
    await check("GET", `/v1/jobs/${longId}/events`, 400);
    await check("GET", "/v1/jobs/nope/events", 404);
    await checkStream("/v1/events?queue=oa");
    await check("GET", "/v1/events?queue=a.b", 400);

    // leases and what a worker reports
    const [leasedA] = (await check("POST", "/v1/queues/oa/leases", 200, {})).jobs;
    await check("POST", "/v1/queues/oa/leases", 400, { max: -1 });
    await check("POST", "/v1/queues/oa/leases", 413, { max: 0, complete: [{ id: a.id, leaseId: leasedA.leaseId, output: tooLong }] });
    await check("POST", "/v1/queues/oa/leases", 415, "{}", text);
    await check("POST", "/v1/queues/oa-gone/leases", 409, {});
    for (const route of ["heartbeat", "output", "complete", "fail", "release"]) {
      const valid = route === "fail" ? { leaseId: "x", error: { message: "m" } } : route === "output" ? { leaseId: "x", chunks: [1] } : { leaseId: "x" };
      await check("POST", `/v1/jobs/${a.id}/${route}`, 400, {});
      await check("POST", `/v1/jobs/nope/${route}`, 404, valid);
      await check("POST", `/v1/jobs/${a.id}/${route}`, 409, valid); // not the job's lease
      await check("POST", `/v1/jobs/${a.id}/${route}`, 413, { leaseId: overBodyLimit });
      await check("POST", `/v1/jobs/${a.id}/${route}`, 415, "{}", text);
    }
    await check("POST", `/v1/jobs/${a.id}/complete`, 413, { leaseId: leasedA.leaseId, output: tooLong });
    await check("POST", `/v1/jobs/${a.id}/heartbeat`, 200, { leaseId: leasedA.leaseId });
    await check("POST", `/v1/jobs/${a.id}/output`, 200, { leaseId: leasedA.leaseId, chunks: ["t"] });
    await check("GET", `/v1/jobs/${a.id}/output-chunks?from=0`, 200);
    await check("GET", `/v1/jobs/${a.id}/output-chunks?from=x`, 400);
    await check("GET", "/v1/jobs/nope/output-chunks", 404);
    await check("POST", `/v1/jobs/${a.id}/complete`, 200, { leaseId: leasedA.leaseId, output: 1 });
    // A finished job's stream resumed past its last event: nothing to send, and EventSource stops.
    await check("GET", `/v1/jobs/${a.id}/events?since=999999999`, 204);
    await check("GET", `/v1/jobs/${a.id}/events`, 204, undefined, { "Last-Event-ID": "999999999" });
    await check("GET", `/v1/jobs/${a.id}/events?since=-1`, 400);
    await check("GET", "/v1/events", 400, undefined, { "Last-Event-ID": "seventeen" });
    const b = (await check("POST", "/v1/queues/oa/jobs", 201, { input: "b" })).job;
    const [leasedB] = (await check("POST", "/v1/queues/oa/leases", 200, {})).jobs;
    expect(leasedB.id).toBe(b.id);
    await check("POST", `/v1/jobs/${b.id}/fail`, 200, { leaseId: leasedB.leaseId, error: { message: "no" }, retryable: false });
    const c = (await check("POST", "/v1/queues/oa/jobs", 201, { input: "c" })).job;
    const leased = await check("POST", "/v1/queues/oa/leases", 200, {});
    await check("POST", `/v1/jobs/${c.id}/release`, 200, { leaseId: leased.jobs[0].leaseId });
    await check("POST", "/v1/queues/oa/leases", 200, { max: 0, complete: [{ id: c.id, leaseId: "stale", output: 1 }] });

    // schedules
    const schedule = { queue: "oa", everySeconds: 3600, input: { s: 1 } };
    await check("PUT", "/v1/schedules/os", 201, schedule);
    await check("PUT", "/v1/schedules/os", 200, schedule);
    await check("PUT", "/v1/schedules/os", 400, { ...schedule, cron: "* * *" });
    await check("PUT", "/v1/schedules/os", 413, { ...schedule, input: tooLong });
    await check("PUT", "/v1/schedules/os", 415, "{}", text);
    await check("GET", "/v1/schedules", 200);
    await check("GET", "/v1/schedules?limit=0", 400);
    await check("GET", "/v1/schedules/os", 200);
    await check("GET", "/v1/schedules/no.pe", 400);
    await check("GET", "/v1/schedules/nope", 404);
    await check("POST", "/v1/schedules/os/pause", 200);
    await check("POST", "/v1/schedules/os/resume", 200);
    for (const action of ["pause", "resume"]) {
      await check("POST", `/v1/schedules/no.pe/${action}`, 400);
      await check("POST", `/v1/schedules/nope/${action}`, 404);
      await check("POST", `/v1/schedules/os/${action}`, 413, { x: overBodyLimit });
      await check("POST", `/v1/schedules/os/${action}`, 415, "{}", text);
    }
    await check("DELETE", "/v1/schedules/os", 204);
    await check("DELETE", "/v1/schedules/os", 404);
    await check("DELETE", "/v1/schedules/no.pe", 400);

    // files and batches (the OpenAI-compatible Batch API)
    const multipart = (parts: Array<[string, string, string?]>) => {
      const boundary = "sluice-openapi-form";
      const body = parts.map(([name, value, filename]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ""}\r\n\r\n${value}\r\n`).join("") + `--${boundary}--\r\n`;
      return { body, headers: { "content-type": `multipart/form-data; boundary=${boundary}` } };
    };
    const upload = multipart([["purpose", "batch"], ["file", '{"custom_id":"a","method":"POST","url":"/v1/embeddings","body":{}}\n', "in.jsonl"]]);
    const file = await check("POST", "/v1/files", 200, upload.body, upload.headers);
    const noFile = multipart([["purpose", "batch"]]);
    await check("POST", "/v1/files", 400, noFile.body, noFile.headers);
    for (const [method, suffix] of [["GET", ""], ["GET", "/content"]] as const) {
      await check(method, `/v1/files/${file.id}${suffix}`, 200);
      await check(method, `/v1/files/${longId}${suffix}`, 400);
      await check(method, `/v1/files/file-nope${suffix}`, 404);
    }
    const openaiBatch = await check("POST", "/v1/batches", 200, { input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h", metadata: { queue: "ob" } });
    await check("POST", "/v1/batches", 400, { input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "1h" });
    await check("POST", "/v1/batches", 404, { input_file_id: "file-nope", endpoint: "/v1/embeddings", completion_window: "24h" });
    await check("GET", "/v1/batches", 200);
    await check("GET", "/v1/batches?limit=0", 400);
    await check("GET", `/v1/batches/${openaiBatch.id}`, 200);
    await check("GET", `/v1/batches/${longId}`, 400);
    await check("GET", "/v1/batches/batch_nope", 404);
    await check("POST", `/v1/batches/${openaiBatch.id}/cancel`, 200);
    await check("POST", `/v1/batches/${longId}/cancel`, 400);
    await check("POST", "/v1/batches/batch_nope/cancel", 404);
    const empty = multipart([["purpose", "batch"], ["file", "\n", "empty.jsonl"]]);
    const emptyFile = await check("POST", "/v1/files", 200, empty.body, empty.headers);
    const doomed = await check("POST", "/v1/batches", 200, { input_file_id: emptyFile.id, endpoint: "/v1/embeddings", completion_window: "24h" });
    await waitFor(async () => (await s.api("GET", `/v1/batches/${doomed.id}`)).body.status === "failed", { what: "a batch of an empty file failed" });
    await check("POST", `/v1/batches/${doomed.id}/cancel`, 409);
    await check("DELETE", `/v1/files/${file.id}`, 200);
    await check("DELETE", `/v1/files/${longId}`, 400);
    await check("DELETE", `/v1/files/${file.id}`, 404);

    // cancel
    await check("POST", `/v1/jobs/${c.id}/cancel`, 200);
    await check("POST", `/v1/jobs/${a.id}/cancel`, 409);
    await check("POST", "/v1/jobs/nope/cancel", 404);
    await check("POST", `/v1/jobs/${longId}/cancel`, 400);
    await check("POST", `/v1/jobs/${a.id}/cancel`, 413, { x: overBodyLimit });
    await check("POST", `/v1/jobs/${a.id}/cancel`, 415, "{}", text);

    // queues
    await check("GET", "/v1/queues/oa", 200);
    await check("GET", "/v1/queues/a.b", 400);
    await check("GET", "/v1/queues/never", 404);
    await check("PUT", "/v1/queues/oa", 200, { maxAttempts: 5 });
    await check("PUT", "/v1/queues/oa", 400, { maxAttempts: 0 });
    await check("PUT", "/v1/queues/oa", 413, { x: overBodyLimit });
    await check("PUT", "/v1/queues/oa", 415, "{}", text);
    await check("PUT", "/v1/queues/oa-gone", 409, {});
    await check("GET", "/openapi.json", 200);

    // blobs (the bytes' presigned routes: test/jobs-e2e/attachments.test.ts)
    const blob = await check("POST", "/v1/blobs", 201, { contentType: "text/plain" });
    await check("POST", "/v1/blobs", 400, { contentType: "" });
    await check("POST", "/v1/blobs", 413, { x: overBodyLimit });
    await check("POST", "/v1/blobs", 415, "{}", text);
    await check("GET", `/v1/blobs/${blob.blobId}`, 409);
    expect((await fetch(blob.uploadUrl, { method: "PUT", body: "hello" })).status).toBe(200);
    await check("GET", `/v1/blobs/${blob.blobId}`, 200);
    await check("GET", "/v1/blobs/nope", 400);
    await check("GET", "/v1/blobs/blob_00000000000000000000000000000000", 404);
    const big = await check("POST", "/v1/blobs", 201, {});
    expect((await fetch(big.uploadUrl, { method: "PUT", body: "x".repeat(1000) })).status).toBe(200);
    await check("POST", "/v1/blobs", 429, {}); // the account's attachments hold its maxBlobBytes

    // workers
    await check("GET", "/v1/workers", 200);
    await check("GET", "/v1/workers", 400, undefined, { "Sluice-Account": "not-an-account" });

    // Every status the document lists was answered above: a new one gets a case here. (The admin
    // routes' are answered in test/admin/admin-openapi.test.ts.)
    expect(unanswered((op) => !op.tags.includes("admin") && op.security === undefined)).toEqual([]);
  });

  it("an SSE subscriber that stops reading is cut off once its backlog passes the cap, not buffered without bound", async () => {
    const socket = net.connect(Number(new URL(s.url).port), "127.0.0.1");
    await once(socket, "connect");
    socket.write("GET /v1/events?queue=flood HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n");
    await once(socket, "data"); // the headers and ": connected": subscribed
    socket.pause(); // and never read again
    const closed = once(socket, "close");
    let received = 0;
    // Each submit sends a job.queued event carrying its 512 KiB input: 40 MiB, well past the cap
    // plus what the kernel's socket buffers hold.
    const input = "x".repeat(512 * 1024);
    for (let i = 0; i < 80; i++) await s.api("POST", "/v1/queues/flood/jobs", { input });
    socket.on("data", (chunk: Buffer) => (received += chunk.length));
    socket.resume(); // what was sent before the cut-off, then the end of the stream
    await within(10_000, closed, "the server closing the stalled stream");
    expect(received).toBeLessThan(40 * 1024 * 1024);
  });

  it("/openapi.json (OpenAPI 3.1) lists every route the server serves", async () => {
    const res = await s.api("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    // The admin routes are listed in test/admin/admin-openapi.test.ts.
    const documented = Object.entries(res.body.paths as Record<string, Record<string, { tags: string[] }>>).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => !op.tags.includes("admin"))
        .map(([m]) => `${m.toUpperCase()} ${path}`),
    );
    const expected = [
      "POST /v1/queues/{queue}/jobs",
      "POST /v1/queues/{queue}/jobs/batch",
      "GET /v1/jobs/{id}",
      "POST /v1/jobs/{id}/cancel",
      "GET /v1/queues/{queue}/jobs",
      "GET /v1/jobs/{id}/events",
      "GET /v1/events",
      "POST /v1/queues/{queue}/leases",
      "POST /v1/jobs/{id}/heartbeat",
      "POST /v1/jobs/{id}/output",
      "GET /v1/jobs/{id}/output-chunks",
      "POST /v1/jobs/{id}/complete",
      "POST /v1/jobs/{id}/fail",
      "POST /v1/jobs/{id}/release",
      "GET /v1/queues/{queue}",
      "PUT /v1/queues/{queue}",
      "GET /v1/workers",
      "GET /v1/schedules",
      "PUT /v1/schedules/{name}",
      "GET /v1/schedules/{name}",
      "DELETE /v1/schedules/{name}",
      "POST /v1/schedules/{name}/pause",
      "POST /v1/schedules/{name}/resume",
      "POST /v1/files",
      "GET /v1/files/{file_id}",
      "GET /v1/files/{file_id}/content",
      "DELETE /v1/files/{file_id}",
      "POST /v1/batches",
      "GET /v1/batches",
      "GET /v1/batches/{batch_id}",
      "POST /v1/batches/{batch_id}/cancel",
      "POST /v1/blobs",
      "GET /v1/blobs/{id}",
      "PUT /v1/blobs/{id}/bytes",
      "GET /v1/blobs/{id}/bytes",
      "GET /openapi.json",
    ];
    expect(documented.sort()).toEqual(expected.sort());
    for (const spec of routeSpecs) {
      // The blob bytes' routes are registered apart, with their own parsers (blob-handlers.ts).
      if (spec.signedUrl) continue;
      expect(s.server.app.hasRoute({ method: spec.method, url: spec.path.replace(/\{(\w+)\}/g, ":$1") }), spec.operationId).toBe(true);
    }
    expect(res.body.paths["/v1/queues/{queue}/jobs"].post.requestBody.content["application/json"].schema.properties.priority).toMatchObject({ minimum: 0, maximum: 9 });
  });
});
