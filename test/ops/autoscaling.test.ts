/**
 * The autoscaling advisor: the formula (docs/operations.md), the workload window on an injected
 * clock, and the numbers a real server gives in GET /v1/queues/{queue} and /metrics for a queue
 * receiving 50 jobs/s that run 0.2 s each on workers of concurrency 2.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock, WorkloadTracker, adviseWorkers } from "../../src/core/index.js";
import { type RunningServer, createLogger, startServer } from "../../src/server/index.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

describe("the workers formula", () => {
  const base = { arrivalsPerSecond: 50, meanServiceSeconds: 0.2, backlog: 0, drainTargetSeconds: 300, workerConcurrency: 2 };

  it("asks for the workers that keep up: 50 jobs/s × 0.2 s ÷ 2 = 5", () => {
    expect(adviseWorkers(base)).toMatchObject({ workersDesired: 5, keepUpWorkers: 5, drainWorkers: 0 });
  });

  it("adds the workers that drain the backlog within the target", () => {
    // 3,000 waiting, 300 s to drain them: 10 jobs/s more, × 0.2 s ÷ 2 = 1 worker more.
    expect(adviseWorkers({ ...base, backlog: 3000 })).toMatchObject({ workersDesired: 6, drainWorkers: 1 });
    expect(adviseWorkers({ ...base, backlog: 3000, drainTargetSeconds: 100 })).toMatchObject({ workersDesired: 8, drainWorkers: 3 });
    // Rounded up as a whole: 5 + 0.1 workers' worth of work needs a sixth.
    expect(adviseWorkers({ ...base, backlog: 300 }).workersDesired).toBe(6);
  });

  it("asks for one worker when there is work but nothing has run yet, none when idle", () => {
    expect(adviseWorkers({ ...base, meanServiceSeconds: undefined }).workersDesired).toBe(1);
    expect(adviseWorkers({ ...base, arrivalsPerSecond: 0, meanServiceSeconds: undefined, backlog: 7 }).workersDesired).toBe(1);
    expect(adviseWorkers({ ...base, arrivalsPerSecond: 0, meanServiceSeconds: undefined }).workersDesired).toBe(0);
    expect(adviseWorkers({ ...base, arrivalsPerSecond: 0 }).workersDesired).toBe(0);
  });
});

describe("the workload window", () => {
  it("counts arrivals and service times over the last minute of whole seconds", () => {
    const clock = new ManualClock(1_000_000);
    const tracker = new WorkloadTracker(clock);
    expect(tracker.rates("q")).toEqual({ arrivalsPerSecond: 0, meanServiceSeconds: undefined });
    for (let s = 0; s < 90; s++) {
      tracker.arrived("q", s < 30 ? 10 : 20);
      tracker.served("q", s < 30 ? 1 : 0.5);
      clock.advance(1000);
    }
    // Seconds 30–89 are in the window: 20 a second, 0.5 s each.
    expect(tracker.rates("q")).toEqual({ arrivalsPerSecond: 20, meanServiceSeconds: 0.5 });
    clock.advance(30_000);
    expect(tracker.rates("q").arrivalsPerSecond).toBe(10);
    clock.advance(31_000);
    expect(tracker.rates("q")).toEqual({ arrivalsPerSecond: 0, meanServiceSeconds: undefined });
  });

  it("divides by the time a new queue has been seen, not by the whole window", () => {
    const clock = new ManualClock(5_000);
    const tracker = new WorkloadTracker(clock);
    for (let s = 0; s < 10; s++) {
      tracker.arrived("q", 50);
      clock.advance(1000);
    }
    expect(tracker.rates("q").arrivalsPerSecond).toBe(50);
  });

  it("forgets queues whose window emptied", () => {
    const clock = new ManualClock(0);
    const tracker = new WorkloadTracker(clock);
    tracker.arrived("gone", 1);
    clock.advance(62_000);
    tracker.sweep();
    tracker.arrived("new", 1);
    clock.advance(1000);
    expect(tracker.rates("gone").arrivalsPerSecond).toBe(0);
    expect(tracker.rates("new").arrivalsPerSecond).toBe(1);
  });
});

describe("the advisor on a running server", () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await removeTempDirs();
  });

  /** One simulated second: 50 submits, a lease of them, and their completion 0.2 s later. */
  async function busySecond(s: RunningServer, clock: ManualClock, queue: string): Promise<void> {
    await Promise.all(Array.from({ length: 50 }, (_, i) => s.jobs.submit("", queue, { input: { i } })));
    const leased = await s.jobs.lease("", queue, { max: 50, leaseSeconds: 30 });
    expect(leased).toHaveLength(50);
    clock.advance(200);
    await Promise.all(leased.map((job) => s.jobs.complete("", job.id, { leaseId: job.leaseToken, output: null })));
    clock.advance(800);
  }

  async function queueAnswer(url: string, queue: string): Promise<{ autoscaling: { workersDesired: number; arrivalsPerSecond: number; meanServiceSeconds: number | null } }> {
    const res = await fetch(`${url}/v1/queues/${queue}`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { queue: { autoscaling: { workersDesired: number; arrivalsPerSecond: number; meanServiceSeconds: number | null } } }).queue;
  }

  async function gauge(url: string, queue: string): Promise<number> {
    const text = await (await fetch(`${url}/metrics`)).text();
    // The server's own account (the default, 000000000000) owns the queue.
    const line = text.split("\n").find((l) => l.startsWith(`sluice_queue_workers_desired{account="000000000000",queue="${queue}"}`));
    expect(line, "the workers gauge").toBeDefined();
    return Number(line!.split(" ")[1]);
  }

  it("asks for 5 workers at 50 jobs/s of 0.2 s on workers of concurrency 2, plus the drain term", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-advisor-"), clock, logger: createLogger({ level: "silent" }) });
    const put = await fetch(`${server.url}/v1/queues/embed`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ workerConcurrency: 2 }) });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { queue: { settings: Record<string, number> } }).queue.settings).toMatchObject({ workerConcurrency: 2, drainTargetSeconds: 300 });

    for (let s = 0; s < 61; s++) await busySecond(server, clock, "embed");
    const steady = await queueAnswer(server.url, "embed");
    expect(steady.autoscaling.arrivalsPerSecond).toBe(50);
    expect(steady.autoscaling.meanServiceSeconds).toBeCloseTo(0.2, 9);
    expect(steady.autoscaling.workersDesired).toBe(5);
    expect(await gauge(server.url, "embed")).toBe(5);

    // 3,000 more arrive at once; the next minute serves 50 a second again, so 3,000 stay waiting.
    for (let i = 0; i < 3000; i += 500) await Promise.all(Array.from({ length: 500 }, (_, k) => server!.jobs.submit("", "embed", { input: { backlog: i + k } })));
    clock.advance(1000);
    for (let s = 0; s < 61; s++) await busySecond(server, clock, "embed");
    const backlogged = await queueAnswer(server.url, "embed");
    expect(backlogged.autoscaling.arrivalsPerSecond).toBe(50);
    // Drain term: 3,000 / 300 s = 10 jobs/s, × 0.2 s ÷ 2 = 1 worker.
    expect(backlogged.autoscaling.workersDesired).toBe(6);
    expect(await gauge(server.url, "embed")).toBe(6);

    // The drain target is the queue's setting: 100 s makes it 3 workers more.
    const tighter = await fetch(`${server.url}/v1/queues/embed`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ drainTargetSeconds: 100 }) });
    expect(((await tighter.json()) as { queue: { autoscaling: { workersDesired: number } } }).queue.autoscaling.workersDesired).toBe(8);
    expect(await gauge(server.url, "embed")).toBe(8);
  });

  it("refuses a drain target or concurrency out of range, changing nothing", async () => {
    server = await startServer({ port: 0, dataDir: await makeTempDir("sluice-advisor-"), logger: createLogger({ level: "silent" }) });
    for (const body of [{ drainTargetSeconds: 0 }, { workerConcurrency: 0 }, { drainTargetSeconds: 86_401 }, { workerConcurrency: 1.5 }]) {
      const res = await fetch(`${server.url}/v1/queues/bounded`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("ValidationFailed");
    }
    expect((await fetch(`${server.url}/v1/queues/bounded`)).status).toBe(404);
  });
});
