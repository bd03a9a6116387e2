/**
 * Real worker processes (`sluice worker <module>` through the CLI) against a real server:
 * 1,000 jobs across 3 processes each succeed exactly once, and a job whose worker is killed
 * with SIGKILL mid-job is retried after its lease by another worker and succeeds.
 */
import { join } from "node:path";
import { Sluice } from "../../client/src/index.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";
import { fixturesDir, killAllWorkers, readLog, spawnWorker } from "./workers.js";

afterEach(async () => {
  // Every test stops its own workers; one still running here is a leak, and fails the test.
  const leaked = await killAllWorkers();
  expect(leaked, "worker processes left running").toBe(0);
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

interface QueueStats {
  jobs: Record<"queued" | "running" | "succeeded" | "failed" | "canceled", number>;
}

async function queueStats(server: TestServer, queue: string): Promise<QueueStats> {
  const res = await fetch(`${server.url}/v1/queues/${queue}`);
  const body = (await res.json()) as { queue: { stats: QueueStats } };
  return body.queue.stats;
}

describe("worker processes", () => {
  // wire: drain
  it("1,000 jobs across 3 worker processes: each succeeds exactly once", async () => {
    const server = await startTestServer();
    const dir = await makeTempDir("sluice-jobs-");
    const log = join(dir, "handled.log");
    const sluice = new Sluice({ url: server.url });
    const queue = sluice.queue("thousand");
    const total = 1000;

    // Workers first, so leasing races submitting, as in production.
    const workers = await Promise.all(
      [0, 1, 2].map(() =>
        spawnWorker({
          url: server.url,
          module: join(fixturesDir, "record.ts"),
          queue: "thousand",
          args: ["--concurrency", "8"],
          env: { SLUICE_TEST_LOG: log },
        }),
      ),
    );

    const ids: string[] = [];
    for (let start = 0; start < total; start += 50) {
      const handles = await Promise.all(Array.from({ length: Math.min(50, total - start) }, (_, i) => queue.submit({ n: start + i })));
      ids.push(...handles.map((h) => h.id));
    }
    expect(new Set(ids).size).toBe(total);

    await waitFor(async () => (await queueStats(server, "thousand")).jobs.succeeded === total, { timeoutMs: 60_000, intervalMs: 100, what: "1000 succeeded jobs" });

    // Drain the workers (SIGTERM): each exits 0.
    for (const w of workers) w.child.kill("SIGTERM");
    const exits = await Promise.all(workers.map((w) => w.exited));
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);

    const stats = await queueStats(server, "thousand");
    expect(stats.jobs).toMatchObject({ succeeded: total, failed: 0, queued: 0, running: 0 });

    // Handled exactly once each (no lease expired here), on the first attempt.
    const entries = await readLog(log);
    const perJob = new Map<string, number>();
    for (const e of entries) perJob.set(e.jobId, (perJob.get(e.jobId) ?? 0) + 1);
    expect(entries).toHaveLength(total);
    expect([...perJob.keys()].sort()).toEqual([...ids].sort());
    expect([...perJob.values()].every((n) => n === 1)).toBe(true);
    expect(entries.every((e) => e.attempt === 1)).toBe(true);
    // The work really was spread over the processes.
    const pids = new Set(entries.map((e) => e.pid));
    expect(pids.size).toBeGreaterThanOrEqual(2);
    for (const pid of pids) expect(workers.map((w) => w.pid)).toContain(pid);

    // Every result is stored and correct.
    const sample = await Promise.all(ids.filter((_, i) => i % 50 === 0).map((id) => sluice.jobs.get<{ n: number }, { n: number; doubled: number }>(id)));
    for (const job of sample) {
      expect(job.status).toBe("succeeded");
      expect(job.output).toEqual({ n: job.input.n, doubled: job.input.n * 2 });
      expect(job.attempt).toBe(1);
    }
  }, 120_000);

  // wire: kill-9
  it("a worker killed with SIGKILL mid-job: the job is retried after its lease and succeeds", async () => {
    const server = await startTestServer();
    const dir = await makeTempDir("sluice-jobs-");
    const log = join(dir, "hold.log");
    const sluice = new Sluice({ url: server.url });
    const leaseArgs = ["--lease-seconds", "2"];

    const first = await spawnWorker({ url: server.url, module: join(fixturesDir, "hold.ts"), queue: "crashy", args: leaseArgs, env: { SLUICE_TEST_LOG: log } });
    const job = await sluice.queue("crashy").submit({ holdOnAttempts: [1] }, { maxAttempts: 3 });

    await waitFor(async () => (await readLog(log)).some((e) => e.event === "started" && e.jobId === job.id && e.pid === first.pid), {
      timeoutMs: 15_000,
      what: "the first worker to start the job",
    });
    expect((await job.get()).status).toBe("running");
    first.child.kill("SIGKILL");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });

    // A second worker takes over once the dead worker's lease runs out.
    const second = await spawnWorker({ url: server.url, module: join(fixturesDir, "hold.ts"), queue: "crashy", args: leaseArgs, env: { SLUICE_TEST_LOG: log } });
    const done = await job.wait({ timeoutMs: 30_000 });
    expect(done.status).toBe("succeeded");
    expect(done.attempt).toBe(2);
    expect(done.output).toEqual({ pid: second.pid, attempt: 2 });

    const events = (await readLog(log)).filter((e) => e.jobId === job.id);
    expect(events.map((e) => `${e.event}@${e.attempt}:${e.pid === first.pid ? "first" : "second"}`)).toEqual([
      "started@1:first",
      "started@2:second",
      "finished@2:second",
    ]);

    second.child.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
  }, 60_000);
});
