/**
 * `sluice worker --labels … --worker-id …` runs the jobs its labels allow, and `sluice workers`
 * lists it, as processes against a real in-process server.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Sluice } from "../../client/src/index.js";
import { startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";
import { killAllWorkers, runCli, spawnWorker } from "./workers.js";

afterEach(async () => {
  expect(await killAllWorkers(), "worker processes left running").toBe(0);
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("sluice workers", { timeout: 180_000 }, () => {
  it("lists a labelled CLI worker once it leased, with its labels; the worker runs a job that requires them", async () => {
    const { url } = await startTestServer();
    const worker = await spawnWorker({ url, module: "test/jobs-e2e/fixtures/record.ts", queue: "cli-gpu", args: ["--labels", "gpu=a100,region=eu", "--worker-id", "cli-gpu-1"], env: { SLUICE_TEST_LOG: "/dev/null" } });
    const sluice = new Sluice({ url });
    const job = await sluice.queue("cli-gpu").submit({ n: 2 }, { requires: { gpu: "a100" } });
    expect((await job.wait({ timeoutMs: 30_000 })).output).toEqual({ n: 2, doubled: 4 });
    const listed = await waitFor(async () => {
      const r = await runCli(["workers", "--json", "--url", url]);
      const workers = (JSON.parse(r.stdout) as { workers: Array<{ workerId: string; labels: unknown; queues: string[] }> }).workers;
      return workers.find((w) => w.workerId === "cli-gpu-1");
    }, { timeoutMs: 30_000, intervalMs: 200, what: "the worker in `sluice workers --json`" });
    expect(listed).toMatchObject({ queues: ["cli-gpu"], labels: { gpu: "a100", region: "eu" } });
    const table = await runCli(["workers", "--url", url]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^WORKER\s+QUEUES\s+LABELS\s+RUNNING\s+LAST SEEN/m);
    expect(table.stdout).toMatch(/^cli-gpu-1\s+cli-gpu\s+gpu=a100,region=eu\s+\d+\s+\S+Z$/m);
    worker.child.kill("SIGTERM");
    await worker.exited;
  });
});
