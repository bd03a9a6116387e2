/** GET /v1/workers: workers that named themselves in a lease request (real server, manual clock). */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sample } from "../support/metrics-text.js";
import { waitFor } from "../support/wait.js";
import { type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer;
beforeEach(async () => {
  s = await startJobsServer();
});
afterEach(async () => {
  await s.stop();
});

const iso = (ms: number): string => new Date(ms).toISOString();

/** The workers list once the sightings of the last second were written (the registry's timer). */
async function workersAfterFlush(): Promise<Array<Record<string, unknown>>> {
  s.clock.advance(1_000);
  await s.server.jobs.flushWorkers();
  const res = await s.api("GET", "/v1/workers");
  expect(res.status).toBe(200);
  return res.body.workers;
}

describe("jobs API: GET /v1/workers", () => {
  it("lists each worker seen in the last 60 s with its queues, labels and running jobs; not one without a workerId", async () => {
    const t0 = s.clock.nowMs();
    await s.api("POST", "/v1/queues/embed/jobs", { input: 1 });
    await s.api("POST", "/v1/queues/embed/jobs", { input: 2 });
    const leased = await s.api("POST", "/v1/queues/embed/leases", { max: 2, workerId: "gpu-7", labels: { gpu: "a100" } });
    expect(leased.body.jobs).toHaveLength(2);
    await s.api("POST", "/v1/queues/other/leases", { workerId: "gpu-7", labels: { gpu: "a100" } });
    await s.api("POST", "/v1/queues/embed/leases", {}); // no workerId: not listed
    await s.api("POST", "/v1/queues/embed/leases", { workerId: "cpu-1" });
    expect(await workersAfterFlush()).toEqual([
      { workerId: "cpu-1", queues: ["embed"], labels: null, lastSeenAt: iso(t0), running: 0 },
      { workerId: "gpu-7", queues: ["embed", "other"], labels: { gpu: "a100" }, lastSeenAt: iso(t0), running: 2 },
    ]);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(sample(metrics, "sluice_workers", { account: "000000000000", queue: "embed" })).toBe(2);
    expect(sample(metrics, "sluice_workers", { account: "000000000000", queue: "other" })).toBe(1);
    const [first] = leased.body.jobs as Array<{ id: string; leaseId: string }>;
    await s.api("POST", `/v1/jobs/${first!.id}/complete`, { leaseId: first!.leaseId, output: "ok" });
    await waitFor(async () => (await workersAfterFlush()).find((w) => w.workerId === "gpu-7")?.running === 1, { what: "gpu-7 to run one job" });
  });

  it("drops a worker a minute after its last lease request, unless it still runs jobs", async () => {
    await s.api("POST", "/v1/queues/q/jobs", { input: 1 });
    await s.api("POST", "/v1/queues/q/leases", { workerId: "busy", leaseSeconds: 600 });
    await s.api("POST", "/v1/queues/q/leases", { workerId: "idle" });
    expect((await workersAfterFlush()).map((w) => w.workerId)).toEqual(["busy", "idle"]);
    for (let i = 0; i < 61; i++) s.clock.advance(1_000);
    await s.server.jobs.flushWorkers();
    const later = await s.api("GET", "/v1/workers");
    expect(later.body.workers.map((w: { workerId: string; running: number }) => [w.workerId, w.running])).toEqual([["busy", 1]]);
  });
});
