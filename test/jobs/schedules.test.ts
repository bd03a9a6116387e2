/**
 * Scheduled jobs over HTTP, on a real server and a manual clock: the routes and their answers,
 * one job per due run (its Idempotency-Key named by schedule and run time), pause and resume,
 * and runs missed while the server was down — created once at start, or skipped, per catchUp.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/index.js";
import { waitFor } from "../support/wait.js";
import { type Json, type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer;
afterEach(async () => {
  await s?.stop();
});

/** A clock on a whole hour (UTC), so interval runs fall on round times. */
function clockAt(iso: string): ManualClock {
  return new ManualClock(Date.parse(iso));
}

async function jobsOf(queue: string): Promise<Json[]> {
  const res = await s.api("GET", `/v1/queues/${queue}/jobs?limit=1000`);
  return res.status === 404 ? [] : (res.body.jobs as Json[]).reverse();
}

/**
 * Waits until the queue holds `n` jobs, then answers their keys. The scheduler's pass runs on its
 * own turn and re-arms its timer when done — after the test's advance() returned — so each poll
 * fires whatever came due at the current time (advance(0)); the clock itself never moves here.
 */
async function runKeys(queue: string, n: number): Promise<string[]> {
  let jobs: Json[] = [];
  await waitFor(
    async () => {
      s.clock.advance(0);
      return (jobs = await jobsOf(queue)).length >= n;
    },
    { what: `${n} jobs in ${queue}` },
  );
  return jobs.map((j) => j.idempotencyKey as string);
}

describe("schedules: the routes", () => {
  it("PUT creates (201) and replaces (200); answers carry the next runs in the schedule's time zone", async () => {
    s = await startJobsServer({ clock: clockAt("2024-03-08T12:00:00Z") });
    const body = { queue: "reports", cron: "30 2 * * *", timezone: "America/New_York", input: { kind: "nightly" }, options: { priority: 7, maxAttempts: 2, metadata: { team: "ml" } } };
    const created = await s.api("PUT", "/v1/schedules/nightly", body);
    expect(created.status).toBe(201);
    expect(created.body.schedule).toMatchObject({
      name: "nightly",
      queue: "reports",
      cron: "30 2 * * *",
      everySeconds: null,
      timezone: "America/New_York",
      input: { kind: "nightly" },
      options: { priority: 7, maxAttempts: 2, metadata: { team: "ml" } },
      catchUp: "latest",
      paused: false,
      lastRunAt: null,
      lastJobId: null,
    });
    // 02:30 New York: 07:30Z in winter; on 2024-03-10 it doesn't exist (it runs at 03:00 EDT); then 06:30Z.
    expect(created.body.schedule.nextRuns).toEqual(["2024-03-09T07:30:00.000Z", "2024-03-10T07:00:00.000Z", "2024-03-11T06:30:00.000Z", "2024-03-12T06:30:00.000Z", "2024-03-13T06:30:00.000Z"]);
    const replaced = await s.api("PUT", "/v1/schedules/nightly", { ...body, cron: undefined, everySeconds: 3600 });
    expect(replaced.status).toBe(200);
    expect(replaced.body.schedule).toMatchObject({ cron: null, everySeconds: 3600 });
    expect(replaced.body.schedule.nextRuns[0]).toBe("2024-03-08T13:00:00.000Z");
    expect((await s.api("GET", "/v1/schedules/nightly")).body.schedule.everySeconds).toBe(3600);
  });

  it("refuses a bad definition with a specific error and writes nothing", async () => {
    s = await startJobsServer();
    const bad: Array<[Json, RegExp]> = [
      [{ queue: "q", cron: "* * * * * * *", input: 1 }, /5 or 6 parts/],
      [{ queue: "q", cron: "0 25 * * *", input: 1 }, /hour/],
      [{ queue: "q", cron: "0 0 30 2 *", input: 1 }, /never matches/],
      [{ queue: "q", cron: "0 * * * *", timezone: "Europe/Atlantis", input: 1 }, /not a known IANA time zone/],
      [{ queue: "q", cron: "0 * * * *", everySeconds: 60, input: 1 }, /exactly one of cron/],
      [{ queue: "q", input: 1 }, /exactly one of cron/],
      [{ queue: "q", everySeconds: 0, input: 1 }, /everySeconds/],
      [{ queue: "q", everySeconds: 60 }, /input/],
      [{ queue: "q.fifo", everySeconds: 60, input: 1 }, /queue/],
      [{ queue: "q", everySeconds: 60, input: 1, catchUp: "some" }, /catchUp/],
      [{ queue: "q", everySeconds: 60, input: 1, options: { delaySeconds: 5 } }, /delaySeconds/],
      [{ queue: "q", everySeconds: 60, input: 1, options: { priority: 10 } }, /priority/],
    ];
    for (const [body, message] of bad) {
      const res = await s.api("PUT", "/v1/schedules/s", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("ValidationFailed");
      expect(res.body.error.message, JSON.stringify(body)).toMatch(message);
    }
    expect((await s.api("PUT", "/v1/schedules/bad%20name", { queue: "q", everySeconds: 60, input: 1 })).status).toBe(400);
    expect((await s.api("GET", "/v1/schedules")).body).toEqual({ schedules: [], nextCursor: null });
    expect((await s.api("GET", "/v1/schedules/s")).body.error.code).toBe("ScheduleNotFound");
  });

  it("lists by name a page at a time; DELETE answers 204, then 404", async () => {
    s = await startJobsServer();
    for (const name of ["c", "a", "b"]) await s.api("PUT", `/v1/schedules/${name}`, { queue: "q", everySeconds: 60, input: name });
    const first = await s.api("GET", "/v1/schedules?limit=2");
    expect(first.body.schedules.map((x: Json) => x.name)).toEqual(["a", "b"]);
    expect(first.body.nextCursor).toBe("b");
    const second = await s.api("GET", `/v1/schedules?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ schedules: [{ name: "c" }], nextCursor: null });
    expect((await s.api("DELETE", "/v1/schedules/b")).status).toBe(204);
    expect((await s.api("DELETE", "/v1/schedules/b")).status).toBe(404);
    expect((await s.api("POST", "/v1/schedules/b/pause")).status).toBe(404);
    expect((await s.api("GET", "/v1/schedules")).body.schedules.map((x: Json) => x.name)).toEqual(["a", "c"]);
  });
});

describe("schedules: runs", () => {
  it("each due run submits exactly one job, with the schedule's input and options and a key from schedule and run time", async () => {
    const clock = clockAt("2024-01-01T00:00:30Z");
    s = await startJobsServer({ clock });
    await s.api("PUT", "/v1/schedules/tick", { queue: "ticks", everySeconds: 60, input: { hello: "world" }, options: { priority: 5, metadata: { from: "tick" }, timeoutSeconds: 30 } });
    expect(await jobsOf("ticks")).toEqual([]);
    clock.advance(30_000);
    expect(await runKeys("ticks", 1)).toEqual(["schedule:tick:2024-01-01T00:01:00.000Z"]);
    const [job] = await jobsOf("ticks");
    expect(job).toMatchObject({ status: "queued", input: { hello: "world" }, priority: 5, metadata: { from: "tick" }, timeoutSeconds: 30 });
    for (let i = 0; i < 3; i++) {
      clock.advance(60_000);
      await runKeys("ticks", 2 + i);
    }
    expect(await runKeys("ticks", 4)).toEqual(["00:01", "00:02", "00:03", "00:04"].map((t) => `schedule:tick:2024-01-01T${t}:00.000Z`));
    const schedule = (await s.api("GET", "/v1/schedules/tick")).body.schedule;
    expect(schedule.lastRunAt).toBe("2024-01-01T00:04:00.000Z");
    // lastJobId names the last run's job.
    const lastRunJob = (await jobsOf("ticks")).find((j: Json) => j.idempotencyKey === "schedule:tick:2024-01-01T00:04:00.000Z");
    expect(schedule.lastJobId).toBe(lastRunJob.id);
    expect(schedule.nextRuns[0]).toBe("2024-01-01T00:05:00.000Z");
    // The jobs run like any others.
    const leased = (await s.api("POST", "/v1/queues/ticks/leases", { max: 10 })).body.jobs;
    expect(leased).toHaveLength(4);
  });

  it("paused, no run submits a job; resumed, it runs from the next run after now (the paused runs are skipped)", async () => {
    const clock = clockAt("2024-01-01T00:00:00Z");
    s = await startJobsServer({ clock });
    await s.api("PUT", "/v1/schedules/p", { queue: "pq", everySeconds: 60, input: 1 });
    const paused = await s.api("POST", "/v1/schedules/p/pause");
    expect(paused.body.schedule).toMatchObject({ paused: true, nextRuns: [] });
    // A PUT while paused keeps it paused.
    expect((await s.api("PUT", "/v1/schedules/p", { queue: "pq", everySeconds: 60, input: 2 })).body.schedule.paused).toBe(true);
    clock.advance(300_000);
    await s.api("POST", "/v1/queues/pq/jobs", { input: "marker" }); // a job of our own, so the queue exists
    const resumed = await s.api("POST", "/v1/schedules/p/resume");
    expect(resumed.body.schedule).toMatchObject({ paused: false, nextRuns: expect.arrayContaining(["2024-01-01T00:06:00.000Z"]) });
    expect(resumed.body.schedule.nextRuns[0]).toBe("2024-01-01T00:06:00.000Z");
    clock.advance(60_000);
    const keys = await runKeys("pq", 2);
    expect(keys).toEqual([null, "schedule:p:2024-01-01T00:06:00.000Z"]);
  });
});

describe("schedules across a restart", () => {
  /**
   * An every-minute schedule runs at 00:01; the server stops; the clock moves to 00:05:30 (runs
   * 00:02–00:04 are missed, 00:05 is on time); it starts again, and the clock reaches 00:06.
   */
  async function downFor(catchUp: string, expected: number): Promise<string[]> {
    const clock = clockAt("2024-01-01T00:00:00Z");
    s = await startJobsServer({ clock });
    const dataDir = s.dataDir;
    await s.api("PUT", "/v1/schedules/r", { queue: "rq", everySeconds: 60, input: 1, catchUp });
    clock.advance(60_000);
    await runKeys("rq", 1);
    await s.stop({ keepDataDir: true });
    clock.advance(4 * 60_000 + 30_000);
    s = await startJobsServer({ clock, dataDir });
    // The first pass runs at start: it creates the 00:05 run (on time) and, per catchUp, missed ones.
    await waitFor(async () => (await s.api("GET", "/v1/schedules/r")).body.schedule.lastRunAt === "2024-01-01T00:05:00.000Z", { what: "the first pass" });
    clock.advance(30_000);
    return runKeys("rq", expected);
  }
  const at = (...times: string[]): string[] => times.map((t) => `schedule:r:2024-01-01T${t}:00.000Z`);

  it("catchUp all: each missed run is created once at start, and no run twice", async () => {
    expect(await downFor("all", 6)).toEqual(at("00:01", "00:02", "00:03", "00:04", "00:05", "00:06"));
  });

  it("catchUp latest (the default): of the missed runs only the latest is created", async () => {
    expect(await downFor("latest", 4)).toEqual(at("00:01", "00:04", "00:05", "00:06"));
  });

  it("catchUp none: the missed runs are skipped", async () => {
    expect(await downFor("none", 3)).toEqual(at("00:01", "00:05", "00:06"));
  });
});
