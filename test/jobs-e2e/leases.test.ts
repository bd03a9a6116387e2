/**
 * Leases with real (short) lease lengths: heartbeats keep a job that runs 3× its lease alive on
 * its first attempt; a worker that stops heartbeating loses the job to another worker; a worker
 * rides out a server restart. Each waits on server-observable conditions, never on a fixed sleep.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type Job, Sluice, type Timers, type Worker, type WorkerPhase } from "../../client/src/index.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";
import { gate } from "../support/gates.js";

const leaseSeconds = 2;
const workers: Worker[] = [];

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => within(15_000, w.close({ timeoutMs: 2_000 }), "worker close")));
});
const ownServers: RunningServer[] = [];

afterAll(async () => {
  await Promise.all(ownServers.map((s) => s.close()));
  await stopAllServers();
  await removeTempDirs();
});

/**
 * How far the job's lease reaches past its attempt's start, by the server's own timestamps: each
 * heartbeat moves leaseExpiresAt to (now + lease), so this exceeds 4 leases only once the attempt
 * has run for about 3.
 */
function leaseReachMs(job: Job): number {
  return job.leaseExpiresAt && job.startedAt ? Date.parse(job.leaseExpiresAt) - Date.parse(job.startedAt) : 0;
}

/** Timers that never fire: a worker built on them never heartbeats (nor times out a request). */
const frozenTimers: Timers = { nowMs: () => Date.now(), schedule: () => () => {} };

describe("leases", () => {
  // wire: heartbeats
  it("a job running 3× its lease survives on heartbeats, on its first attempt", async () => {
    const server = await startTestServer();
    const sluice = new Sluice({ url: server.url });
    const q = sluice.queue("long-inference");
    const release = gate();
    let calls = 0;
    workers.push(
      q.work(
        async () => {
          calls++;
          await release.promise;
          return "finished";
        },
        { leaseSeconds },
      ),
    );
    const handle = await q.submit({ model: "big" }, { maxAttempts: 3 });
    // Wait until the server has seen the attempt outlive three lease lengths; at every look it is
    // still running, still the first attempt (an expired lease would have put it back in queue).
    await waitFor(
      async () => {
        const job = await handle.get();
        if (job.status === "queued" && job.attempt === 0) return undefined;
        expect(job).toMatchObject({ status: "running", attempt: 1 });
        return leaseReachMs(job) > 4 * leaseSeconds * 1000;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "three lease lengths of heartbeats" },
    );
    release.open();
    expect(await handle.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "succeeded", attempt: 1, output: "finished" });
    expect(calls).toBe(1);
  }, 60_000);

  it("a job whose worker stops heartbeating is retried by another worker", async () => {
    const server = await startTestServer();
    const sluice = new Sluice({ url: server.url });
    const q = sluice.queue("stalled");
    const stuckStarted = gate();
    const stuckRelease = gate();
    const stuckErrors: { err: unknown; phase: WorkerPhase }[] = [];
    const stuck = q.work(
      async () => {
        stuckStarted.open();
        await stuckRelease.promise;
        return "from the stalled worker";
      },
      { leaseSeconds, timers: frozenTimers, onError: (err, where) => stuckErrors.push({ err, phase: where.phase }) },
    );
    workers.push(stuck);
    const handle = await q.submit({}, { maxAttempts: 3 });
    await within(10_000, stuckStarted.promise, "the stalled worker to start the job");

    const healthy = q.work(async (job) => `retried on attempt ${job.attempt}`, { leaseSeconds });
    workers.push(healthy);
    const done = await handle.wait({ timeoutMs: 20_000 });
    expect(done).toMatchObject({ status: "succeeded", attempt: 2, output: "retried on attempt 2" });

    // The stalled worker finishes late: the server refuses its result, the job keeps the retry's.
    stuckRelease.open();
    await within(10_000, stuck.close(), "stalled worker close");
    expect(stuckErrors.map((e) => e.phase)).toEqual(["complete"]);
    expect(stuckErrors[0]!.err).toMatchObject({ name: "SluiceApiError", status: 409 });
    expect((await handle.get()).output).toBe("retried on attempt 2");
  }, 60_000);

  // wire: worker-outage
  it("a worker rides out a server restart (backoff, then leases again)", async () => {
    const dataDir = await makeTempDir("sluice-restart-");
    const first = await startTestServer({ dataDir });
    const sluice = new Sluice({ url: first.url });
    const q = sluice.queue("restarts");
    const leaseErrors: unknown[] = [];
    workers.push(q.work(async (job) => ({ echoed: job.input }), { leaseSeconds, waitSeconds: 1, onError: (err) => leaseErrors.push(err) }));
    expect(await (await q.submit({ before: true })).wait({ timeoutMs: 10_000 })).toMatchObject({ status: "succeeded" });

    await first.stop({ keepDataDir: true });
    await waitFor(() => leaseErrors.length > 0, { timeoutMs: 10_000, what: "the worker to notice the server is gone" });
    const second = await startServerOnPort(dataDir, first.port);
    expect(second.url).toBe(first.url);

    const after = await q.submit({ after: true });
    expect(await after.wait({ timeoutMs: 20_000 })).toMatchObject({ status: "succeeded", output: { echoed: { after: true } } });
  }, 60_000);
});

/** The port was just freed; another process could take it in between, so retry briefly. */
async function startServerOnPort(dataDir: string, port: number): Promise<RunningServer> {
  let lastError: unknown;
  for (let i = 0; i < 20; i++) {
    try {
      const server = await startServer({ host: "127.0.0.1", port, dataDir });
      ownServers.push(server);
      return server;
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw lastError;
}
