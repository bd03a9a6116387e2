/**
 * Streamed output over the jobs API, against a real server: POST /v1/jobs/{id}/output under the
 * lease (each request one job.output event with an id, resumable with Last-Event-ID), the checks
 * on a request's chunks, and GET …/output-chunks reading the latest attempt's chunks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { within } from "../support/wait.js";
import { type Json, type JobsServer, openEventStream, startJobsServer } from "./http-harness.js";

let s: JobsServer;
const streams: Array<{ close(): void }> = [];
afterEach(async () => {
  for (const st of streams.splice(0)) st.close();
  await s?.stop();
});

async function leaseOne(queue: string, input: unknown): Promise<Json> {
  await s.api("POST", `/v1/queues/${queue}/jobs`, { input });
  const [job] = (await s.api("POST", `/v1/queues/${queue}/leases`, { max: 1 })).body.jobs;
  return job;
}

describe("streamed output", () => {
  it("each accepted request is one job.output event, resumable with Last-Event-ID, and readable after the job", async () => {
    s = await startJobsServer();
    const job = await leaseOne("q", { prompt: "hi" });
    const stream = await openEventStream(`${s.url}/v1/jobs/${job.id}/events`);
    streams.push(stream);
    const first = await s.api("POST", `/v1/jobs/${job.id}/output`, { leaseId: job.leaseId, chunks: ["a", "b"] });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ cancelRequested: false, chunks: 2 });
    expect((await s.api("POST", `/v1/jobs/${job.id}/output`, { leaseId: job.leaseId, chunks: [{ t: "c" }] })).body.chunks).toBe(3);
    const seen: Array<{ id?: string; event: string; data: Json }> = [];
    while (seen.length < 2) {
      const e = await within(10_000, stream.next());
      if (!e) throw new Error("the stream ended");
      if (e.event === "job.output") seen.push(e);
    }
    expect(seen.map((e) => e.data)).toEqual([
      { type: "job.output", at: expect.any(String), jobId: job.id, attempt: 1, index: 0, chunks: ["a", "b"] },
      { type: "job.output", at: expect.any(String), jobId: job.id, attempt: 1, index: 2, chunks: [{ t: "c" }] },
    ]);
    const resumed = await openEventStream(`${s.url}/v1/jobs/${job.id}/events`, { "Last-Event-ID": seen[0]!.id! });
    streams.push(resumed);
    const again = await within(10_000, resumed.next());
    expect(again).toMatchObject({ id: seen[1]!.id, event: "job.output", data: { index: 2 } });
    expect((await s.api("GET", `/v1/jobs/${job.id}/output-chunks`)).body).toEqual({ attempt: 1, chunks: ["a", "b", { t: "c" }], next: 3, done: false });
    await s.api("POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output: "done" });
    expect((await s.api("GET", `/v1/jobs/${job.id}/output-chunks?from=1`)).body).toEqual({ attempt: 1, chunks: ["b", { t: "c" }], next: 3, done: true });
    const late = await s.api("POST", `/v1/jobs/${job.id}/output`, { leaseId: job.leaseId, chunks: ["x"] });
    expect([late.status, late.body.error?.code ?? late.body.code]).toEqual([409, "JobAlreadyFinished"]);
  });

  it("every bad request is a specific 400 and changes nothing", async () => {
    s = await startJobsServer();
    const job = await leaseOne("q", 1);
    const bad = async (body: unknown): Promise<string> => {
      const r = await s.api("POST", `/v1/jobs/${job.id}/output`, body);
      expect(r.status).toBe(400);
      return JSON.stringify(r.body);
    };
    expect(await bad({ leaseId: job.leaseId, chunks: [] })).toMatch(/chunks/);
    expect(await bad({ leaseId: job.leaseId, chunks: "a" })).toMatch(/chunks/);
    expect(await bad({ leaseId: job.leaseId })).toMatch(/chunks/);
    expect(await bad({ chunks: ["a"] })).toMatch(/leaseId/);
    expect(await bad({ leaseId: job.leaseId, chunks: Array.from({ length: 1001 }, () => 1) })).toMatch(/chunks/);
    expect(await bad({ leaseId: job.leaseId, chunks: ["x".repeat(600_000), "y".repeat(600_000)] })).toMatch(/1048576/);
    expect((await s.api("GET", `/v1/jobs/${job.id}/output-chunks?from=-1`)).status).toBe(400);
    expect((await s.api("GET", `/v1/jobs/${job.id}/output-chunks`)).body).toEqual({ attempt: 1, chunks: [], next: 0, done: false });
    const wrong = await s.api("POST", `/v1/jobs/${job.id}/output`, { leaseId: `${job.leaseId}x`, chunks: ["a"] });
    expect([wrong.status, JSON.stringify(wrong.body)]).toEqual([409, expect.stringContaining("LeaseMismatch")]);
    expect((await s.api("GET", `/v1/jobs/${job.id}/output-chunks`)).body.next).toBe(0);
  });
});
