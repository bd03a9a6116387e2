/** Worker labels and job requirements through the REST API (real server, manual clock). */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor, within } from "../support/wait.js";
import { type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer;
beforeEach(async () => {
  s = await startJobsServer();
});
afterEach(async () => {
  await s.stop();
});

async function submit(queue: string, body: Record<string, unknown>): Promise<string> {
  const res = await s.api("POST", `/v1/queues/${queue}/jobs`, { input: 1, ...body });
  expect(res.status).toBe(201);
  return res.body.job.id as string;
}

async function leaseIds(queue: string, body: Record<string, unknown> = {}): Promise<string[]> {
  const res = await s.api("POST", `/v1/queues/${queue}/leases`, { max: 10, ...body });
  expect(res.status).toBe(200);
  return (res.body.jobs as Array<{ id: string }>).map((j) => j.id);
}

describe("jobs API: worker labels and job requirements", () => {
  it("leases a job with requires only to a worker whose labels contain every pair", async () => {
    const plain = await submit("infer", {});
    const a100 = await submit("infer", { requires: { gpu: "a100" } });
    const eu = await submit("infer", { requires: { gpu: "a100", region: "eu" } });
    const got = await s.api("GET", `/v1/jobs/${eu}`);
    expect(got.body.job.requires).toEqual({ gpu: "a100", region: "eu" });
    expect(await leaseIds("infer", { labels: { gpu: "t4" } })).toEqual([plain]);
    expect(await leaseIds("infer")).toEqual([]);
    expect(await leaseIds("infer", { labels: { gpu: "a100", region: "us" }, workerId: "w-1" })).toEqual([a100]);
    expect(await leaseIds("infer", { labels: { region: "eu", gpu: "a100" } })).toEqual([eu]);
  });

  it("wakes a long-polling labelled worker for a job it can run, even with an unlabelled worker waiting first", async () => {
    const unlabelled = s.api("POST", "/v1/queues/wake/leases", { waitSeconds: 20 });
    // The unlabelled poll waits before the labelled one: a wake-up counted per job would go to it.
    await waitFor(() => s.server.queues.waiters.waiterCount() === 1, { what: "the unlabelled lease to wait" });
    const labelled = s.api("POST", "/v1/queues/wake/leases", { waitSeconds: 20, labels: { gpu: "a100" } });
    await waitFor(() => s.server.queues.waiters.waiterCount() === 2, { what: "the labelled lease to wait" });
    const id = await submit("wake", { requires: { gpu: "a100" } });
    const answer = await within(5_000, labelled, "the labelled lease");
    expect(answer.body.jobs.map((j: { id: string }) => j.id)).toEqual([id]);
    // The unlabelled poll looked, found nothing it may run, and waits out its long poll.
    await waitFor(() => s.server.queues.waiters.waiterCount() === 1, { what: "the unlabelled lease to wait again" });
    s.clock.advance(20_000);
    expect((await within(5_000, unlabelled, "the unlabelled lease")).body.jobs).toEqual([]);
  });

  it("refuses bad labels, requires and workerId with a 400 naming the problem, and creates nothing", async () => {
    const long = "x".repeat(129);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    const submits: Array<[Record<string, unknown>, RegExp]> = [
      [{ requires: ["gpu"] }, /requires/],
      [{ requires: { gpu: 1 } }, /requires/],
      [{ requires: { "-gpu": "a100" } }, /key "-gpu"/],
      [{ requires: { gpu: long } }, /requires/],
      [{ requires: many }, /requires/],
      [{ requires: { gpu: "a100" }, tenant: "acme" }, /requires cannot be combined with tenant/],
    ];
    for (const [body, message] of submits) {
      const res = await s.api("POST", "/v1/queues/refused/jobs", { input: 1, ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("ValidationFailed");
      expect(res.body.error.message).toMatch(message);
    }
    const list = await s.api("GET", "/v1/queues/refused/jobs");
    expect(list.body.jobs ?? []).toEqual([]);
    const leases: Array<[Record<string, unknown>, RegExp]> = [
      [{ labels: "gpu=a100" }, /labels/],
      [{ labels: { gpu: null } }, /labels/],
      [{ labels: { "gpu a100": "x" } }, /key "gpu a100"/],
      [{ workerId: "" }, /workerId/],
      [{ workerId: "w".repeat(129) }, /workerId/],
    ];
    for (const [body, message] of leases) {
      const res = await s.api("POST", "/v1/queues/refused/leases", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("ValidationFailed");
      expect(res.body.error.message).toMatch(message);
    }
  });
});
