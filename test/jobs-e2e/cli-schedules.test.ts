/** `sluice schedules put|get|list|pause|resume|delete` as processes against a real server. */
import { afterAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/index.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";
import { runCli } from "./workers.js";

let server: TestServer;
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

describe("sluice schedules", () => {
  it("puts a schedule and prints it with its next runs; get, list, pause, resume and delete it", async () => {
    server = await startTestServer();
    const url = server.url;
    const put = await runCli(["schedules", "put", "cli-nightly", "--queue", "reports", "--cron", "0 2 * * *", "--timezone", "Asia/Tokyo", "--input", '{"kind":"nightly"}', "--priority", "4", "--catch-up", "all", "--url", url]);
    expect(put.code, put.stderr).toBe(0);
    const schedule = JSON.parse(put.stdout);
    expect(schedule).toMatchObject({ name: "cli-nightly", queue: "reports", cron: "0 2 * * *", timezone: "Asia/Tokyo", input: { kind: "nightly" }, options: { priority: 4 }, catchUp: "all" });
    expect(schedule.nextRuns.every((t: string) => t.endsWith("T17:00:00.000Z"))).toBe(true);
    expect(JSON.parse((await runCli(["schedules", "get", "cli-nightly", "--url", url])).stdout).name).toBe("cli-nightly");
    expect(JSON.parse((await runCli(["schedules", "list", "--url", url])).stdout).schedules.map((s: { name: string }) => s.name)).toContain("cli-nightly");
    expect(JSON.parse((await runCli(["schedules", "pause", "cli-nightly", "--url", url])).stdout).paused).toBe(true);
    expect(JSON.parse((await runCli(["schedules", "resume", "cli-nightly", "--url", url])).stdout).paused).toBe(false);
    const deleted = await runCli(["schedules", "delete", "cli-nightly", "--url", url]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const missing = await runCli(["schedules", "get", "cli-nightly", "--url", url]);
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringContaining("ScheduleNotFound")]);
  });

  it("get prints the last run's job (lastJobId) once a run has created it", async () => {
    const clock = new ManualClock(Date.parse("2024-01-01T00:00:30Z"));
    const srv = await startTestServer({ clock });
    const put = await runCli(["schedules", "put", "cli-tick", "--queue", "cli-ticks", "--every-seconds", "60", "--url", srv.url]);
    expect(JSON.parse(put.stdout).lastJobId).toBeNull();
    clock.advance(30_000);
    const jobs = await waitFor(
      async () => {
        clock.advance(0); // the scheduler re-arms after its pass: fire what is due now
        const res = await fetch(`${srv.url}/v1/queues/cli-ticks/jobs`);
        const list = res.status === 200 ? ((await res.json()) as { jobs: Array<{ id: string; idempotencyKey: string }> }).jobs : [];
        return list.length > 0 ? list : undefined;
      },
      { what: "the first run's job" },
    );
    expect(jobs[0]!.idempotencyKey).toBe("schedule:cli-tick:2024-01-01T00:01:00.000Z");
    const got = await runCli(["schedules", "get", "cli-tick", "--url", srv.url]);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ lastRunAt: "2024-01-01T00:01:00.000Z", lastJobId: jobs[0]!.id });
  });

  it("refuses bad usage (exit 2) before sending anything, and shows the server's reason for a bad cron (exit 1)", async () => {
    const url = server.url;
    const both = await runCli(["schedules", "put", "x", "--queue", "q", "--cron", "* * * * *", "--every-seconds", "5", "--url", url]);
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining("exactly one of --cron and --every-seconds")]);
    const noQueue = await runCli(["schedules", "put", "x", "--every-seconds", "5", "--url", url]);
    expect(noQueue.code).toBe(2);
    const bad = await runCli(["schedules", "put", "x", "--queue", "q", "--cron", "99 * * * *", "--url", url]);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining("ValidationFailed")]);
  });
});
