/**
 * Worker labels and the workers list across two nodes on one PostgreSQL database: a job submitted
 * with requires through node A is leased only by a matching worker on node B, which a lease
 * waiting there gets as soon as A commits it; both nodes list the workers each node saw.
 */
import { describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server/index.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { startPostgresNodes } from "../support/postgres-nodes.js";
import { waitFor, within } from "../support/wait.js";
import type { Json } from "./http-harness.js";

const database = usePostgresDatabase();

async function api(server: RunningServer, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.url}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json()) as Json };
}

describe("labels and workers on two PostgreSQL-backed nodes", () => {
  it("routes a job submitted on A to the matching worker on B, long-polling there, and both nodes list both workers", async () => {
    const [a, b] = (await startPostgresNodes(2, database.url)) as [RunningServer, RunningServer];
    const plainOnB = api(b, "POST", "/v1/queues/infer/leases", { waitSeconds: 20, workerId: "cpu-b" });
    await waitFor(() => b.queues.waiters.waiterCount() === 1, { what: "the unlabelled lease waiting on B" });
    const gpuOnB = api(b, "POST", "/v1/queues/infer/leases", { waitSeconds: 20, labels: { gpu: "a100" }, workerId: "gpu-b" });
    await waitFor(() => b.queues.waiters.waiterCount() === 2, { what: "the labelled lease waiting on B" });
    const job = (await api(a, "POST", "/v1/queues/infer/jobs", { input: { prompt: "p" }, requires: { gpu: "a100" } })).body.job;
    const got = await within(10_000, gpuOnB, "the labelled lease on B");
    expect(got.body.jobs.map((j: { id: string }) => j.id)).toEqual([job.id]);
    expect((await api(a, "POST", "/v1/queues/infer/leases", { labels: { gpu: "t4" }, workerId: "t4-a" })).body.jobs).toEqual([]);
    const plain = (await api(a, "POST", "/v1/queues/infer/jobs", { input: { prompt: "q" } })).body.job;
    expect((await within(10_000, plainOnB, "the unlabelled lease on B")).body.jobs.map((j: { id: string }) => j.id)).toEqual([plain.id]);
    await Promise.all([a.jobs.flushWorkers(), b.jobs.flushWorkers()]);
    for (const node of [a, b]) {
      const workers = (await api(node, "GET", "/v1/workers")).body.workers as Array<{ workerId: string; labels: unknown; running: number; queues: string[] }>;
      expect(workers.map((w) => [w.workerId, w.labels, w.running, w.queues])).toEqual([
        ["cpu-b", null, 1, ["infer"]],
        ["gpu-b", { gpu: "a100" }, 1, ["infer"]],
        ["t4-a", { gpu: "t4" }, 0, ["infer"]],
      ]);
    }
    // Completed through A: B, which leased it, hears of it and counts one job fewer.
    await api(a, "POST", `/v1/jobs/${job.id}/complete`, { leaseId: got.body.jobs[0].leaseId, output: "done" });
    await waitFor(
      async () => {
        await b.jobs.flushWorkers();
        const workers = (await api(a, "GET", "/v1/workers")).body.workers as Array<{ workerId: string; running: number }>;
        return workers.find((w) => w.workerId === "gpu-b")?.running === 0;
      },
      { what: "gpu-b's job counted done on every node" },
    );
  });
});
