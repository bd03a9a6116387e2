import { describe, expect, it } from "vitest";
import { SluiceError, limits } from "../../src/core/index.js";
import { planDueRuns, scheduleRunKey, upcomingRuns } from "../../src/core/schedules/due-runs.js";
import { everySecondsRunTimes } from "../../src/core/schedules/run-times.js";
import { validateScheduleInput } from "../../src/core/schedules/schedule-validation.js";
import { cronCompiler } from "../../src/server/cron.js";

const iso = (ms: number[] | number | undefined): unknown => (Array.isArray(ms) ? ms.map((m) => new Date(m).toISOString()) : ms === undefined ? undefined : new Date(ms).toISOString());
const at = (s: string): number => Date.parse(s);
const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof SluiceError ? `${err.code}: ${err.message}` : `not a SluiceError: ${String(err)}`;
  }
  return undefined;
};

describe("cron run times (croner, time zones, DST)", () => {
  it("reads 5 fields as minutes and 6 as seconds first", () => {
    const hourly = cronCompiler("0 * * * *", "UTC");
    expect(iso(upcomingRuns(hourly, at("2024-01-01T10:00:00Z"), 3))).toEqual(["2024-01-01T10:00:00.000Z", "2024-01-01T11:00:00.000Z", "2024-01-01T12:00:00.000Z"]);
    const tenSeconds = cronCompiler("*/10 * * * * *", "UTC");
    expect(iso(upcomingRuns(tenSeconds, at("2024-01-01T10:00:01Z"), 2))).toEqual(["2024-01-01T10:00:10.000Z", "2024-01-01T10:00:20.000Z"]);
  });

  it("runs a daily job at local time across both DST changes, once each day", () => {
    const daily = cronCompiler("30 1 * * *", "America/New_York");
    // Fall back (2024-11-03): 01:30 happens twice; it runs once, at the first (EDT, 05:30Z).
    expect(iso(upcomingRuns(daily, at("2024-11-02T12:00:00Z"), 3))).toEqual(["2024-11-03T05:30:00.000Z", "2024-11-04T06:30:00.000Z", "2024-11-05T06:30:00.000Z"]);
    // Spring forward (2024-03-10): 02:30 does not exist; it runs when the clock jumped (03:00 EDT).
    const gap = cronCompiler("30 2 * * *", "America/New_York");
    expect(iso(upcomingRuns(gap, at("2024-03-09T12:00:00Z"), 2))).toEqual(["2024-03-10T07:00:00.000Z", "2024-03-11T06:30:00.000Z"]);
    // Berlin: 09:00 local is 08:00Z in winter and 07:00Z in summer.
    const berlin = cronCompiler("0 9 * * 1-5", "Europe/Berlin");
    expect(iso(upcomingRuns(berlin, at("2024-03-29T00:00:00Z"), 2))).toEqual(["2024-03-29T08:00:00.000Z", "2024-04-01T07:00:00.000Z"]);
  });

  it("refuses 7 fields, bad values, an expression that never matches, and an unknown zone, each saying why", () => {
    expect(codeOf(() => cronCompiler("* * * * * * *", "UTC"))).toMatch(/^ValidationFailed: .*5 or 6 parts/);
    expect(codeOf(() => cronCompiler("61 * * * *", "UTC"))).toMatch(/^ValidationFailed: .*minute/);
    expect(codeOf(() => cronCompiler("0 0 31 2 *", "UTC"))).toMatch(/^ValidationFailed: .*never matches/);
    const input = { queue: "q", cron: "0 * * * *", timezone: "Mars/Olympus", input: {} };
    expect(codeOf(() => validateScheduleInput("s", input, cronCompiler))).toMatch(/^ValidationFailed: timezone "Mars\/Olympus" is not a known IANA time zone/);
  });
});

describe("a schedule's definition", () => {
  const ok = { queue: "reports", cron: "0 6 * * *", input: { kind: "daily" } };
  it("takes exactly one of cron and everySeconds", () => {
    expect(codeOf(() => validateScheduleInput("s", { ...ok, everySeconds: 60 }, cronCompiler))).toMatch(/exactly one of cron/);
    expect(codeOf(() => validateScheduleInput("s", { queue: "q", input: 1 }, cronCompiler))).toMatch(/exactly one of cron/);
    expect(codeOf(() => validateScheduleInput("s", { queue: "q", everySeconds: 0, input: 1 }, cronCompiler))).toMatch(/everySeconds must be an integer from 1/);
  });
  it("checks the job options as a submit would, and refuses ones a schedule can't use", () => {
    expect(codeOf(() => validateScheduleInput("s", { ...ok, options: { priority: 10 } }, cronCompiler))).toMatch(/priority must be an integer from 0 to 9/);
    expect(codeOf(() => validateScheduleInput("s", { ...ok, options: { delaySeconds: 5 } as never }, cronCompiler))).toMatch(/options.delaySeconds is not a job option/);
    expect(codeOf(() => validateScheduleInput("s", { ...ok, options: { tenant: "has space" } }, cronCompiler))).toMatch(/tenant must be/);
    expect(codeOf(() => validateScheduleInput("s", { ...ok, catchUp: "some" as never }, cronCompiler))).toMatch(/catchUp must be one of none, latest, all/);
    expect(codeOf(() => validateScheduleInput("bad name", ok, cronCompiler))).toMatch(/Schedule name must be/);
    expect(codeOf(() => validateScheduleInput("s", { ...ok, queue: "q.fifo" }, cronCompiler))).toMatch(/\.fifo/);
    const { definition } = validateScheduleInput("s", { ...ok, options: { webhook: { url: "https://example.com/hook" } } }, cronCompiler);
    expect(JSON.parse(definition.optionsJson)).toEqual({ webhook: { url: "https://example.com/hook", events: ["job.succeeded", "job.failed", "job.canceled"] } });
    expect(definition).toMatchObject({ queueName: "reports", cron: "0 6 * * *", timezone: "UTC", catchUp: "latest", inputJson: '{"kind":"daily"}' });
  });
});

describe("planDueRuns", () => {
  const hourly = everySecondsRunTimes(3600);
  const H = 3_600_000;
  const t0 = at("2024-01-01T00:00:00Z");

  it("is not due before its next run, and creates the one due run on time", () => {
    expect(planDueRuns({ nextRunAtMs: t0 + H, nowMs: t0 + H - 1, catchUp: "all", times: hourly })).toEqual({ runs: [], nextRunAtMs: t0 + H });
    expect(planDueRuns({ nextRunAtMs: t0 + H, nowMs: t0 + H + 5_000, catchUp: "none", times: hourly })).toEqual({ runs: [t0 + H], nextRunAtMs: t0 + 2 * H });
  });

  it("after downtime: none skips the missed runs, latest creates the last, all creates each (at most catchUpMaxRuns)", () => {
    const p = { nextRunAtMs: t0 + H, nowMs: t0 + 5 * H + 30 * 60_000, times: hourly };
    expect(planDueRuns({ ...p, catchUp: "none" })).toEqual({ runs: [], nextRunAtMs: t0 + 6 * H });
    expect(planDueRuns({ ...p, catchUp: "latest" })).toEqual({ runs: [t0 + 5 * H], nextRunAtMs: t0 + 6 * H });
    expect(planDueRuns({ ...p, catchUp: "all" })).toEqual({ runs: [1, 2, 3, 4, 5].map((k) => t0 + k * H), nextRunAtMs: t0 + 6 * H });
    const everySecond = everySecondsRunTimes(1);
    const long = planDueRuns({ nextRunAtMs: t0, nowMs: t0 + 3_600_000, catchUp: "all", times: everySecond });
    // The latest catchUpMaxRuns missed ones, then the last minute's on-time ones.
    expect(long.runs.length).toBe(limits.schedules.catchUpMaxRuns + limits.schedules.missedAfterMs / 1000);
    expect(long.runs[0]).toBe(t0 + 3_600_000 - limits.schedules.missedAfterMs - (limits.schedules.catchUpMaxRuns - 1) * 1000);
    expect(long.nextRunAtMs).toBe(t0 + 3_601_000);
  });

  it("counts a run as missed only once it is more than missedAfterMs late", () => {
    const late = limits.schedules.missedAfterMs;
    expect(planDueRuns({ nextRunAtMs: t0 + H, nowMs: t0 + H + late - 1, catchUp: "none", times: hourly }).runs).toEqual([t0 + H]);
    expect(planDueRuns({ nextRunAtMs: t0 + H, nowMs: t0 + H + late, catchUp: "none", times: hourly }).runs).toEqual([]);
  });

  it("follows a cron schedule's local times through a missed DST day", () => {
    const daily = cronCompiler("30 2 * * *", "America/New_York");
    const plan = planDueRuns({ nextRunAtMs: at("2024-03-09T07:30:00Z"), nowMs: at("2024-03-11T12:00:00Z"), catchUp: "all", times: daily });
    expect(iso(plan.runs)).toEqual(["2024-03-09T07:30:00.000Z", "2024-03-10T07:00:00.000Z", "2024-03-11T06:30:00.000Z"]);
    expect(iso(plan.nextRunAtMs)).toBe("2024-03-12T06:30:00.000Z");
  });

  it("names a run's job by schedule and run time", () => {
    expect(scheduleRunKey("nightly", t0)).toBe("schedule:nightly:2024-01-01T00:00:00.000Z");
  });
});
