/**
 * Worker labels and job requirements through the TS SDK against a real server: `requires` on
 * submit, `labels` and `workerId` on a worker, every lease request (the acks' too) carrying them.
 */
import { describe, expect, it } from "vitest";
import type { LeasedJob, Sluice, WorkerOptions } from "../../client/src/index.js";
import { useSdkServer } from "../support/sdk-server.js";
import { within } from "../support/wait.js";

let sluice: Sluice;
const { freshQueue } = useSdkServer("labels", (_server, client) => {
  sluice = client;
});

/** Runs a worker until it has done `n` jobs; answers the ids it ran, in order. */
async function runUntil(queue: string, n: number, opts: Pick<WorkerOptions, "labels" | "workerId">): Promise<string[]> {
  const ran: string[] = [];
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const worker = sluice.queue(queue).work(
    async (job: LeasedJob) => {
      ran.push(job.id);
      if (ran.length === n) done();
      return { by: opts.labels ?? null };
    },
    { concurrency: 2, ...opts },
  );
  await within(20_000, all, `${n} jobs run by the worker`);
  await worker.close();
  return ran;
}

describe("TS SDK: labels and requires", () => {
  it("a labelled worker runs the jobs it can; one without labels only the jobs that require nothing", async () => {
    const queue = freshQueue();
    const q = sluice.queue(queue);
    const gpu = await q.submit({ n: 1 }, { requires: { gpu: "a100" } });
    const plain = await q.submit({ n: 2 });
    const gpu2 = await q.submit({ n: 3 }, { requires: { gpu: "a100" } });
    expect(gpu.job.requires).toEqual({ gpu: "a100" });
    expect(await runUntil(queue, 1, { workerId: "cpu-1" })).toEqual([plain.id]);
    const ran = await runUntil(queue, 2, { labels: { gpu: "a100", region: "eu" }, workerId: "gpu-1" });
    expect(ran.sort()).toEqual([gpu.id, gpu2.id].sort());
    const done = await sluice.jobs.get(gpu.id);
    expect(done).toMatchObject({ status: "succeeded", output: { by: { gpu: "a100", region: "eu" } } });
  });

  it("refuses malformed labels before anything is leased", () => {
    expect(() => sluice.queue(freshQueue()).work(async () => null, { labels: { gpu: 1 as unknown as string } })).toThrow(/labels.gpu must be a string/);
  });
});
