/**
 * What runs without a request stays in its account: a schedule of another account fires into
 * that account's queue, and the upkeep retries an expired lease of another account's job by its
 * own queue's settings (real SQLite, manual clock).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ScheduleService } from "../../src/core/schedules/schedule-service.js";
import { scheduleRunJobs } from "../../src/core/schedules/schedule-run-jobs.js";
import { cronCompiler } from "../../src/server/cron.js";
import { type JobsHarness, expectCode, openJobsHarness } from "./jobs-harness.js";

const other = "222222222222";
let h: JobsHarness;

afterEach(async () => {
  await h.close();
});

describe("account upkeep", () => {
  it("a schedule of another account submits its runs to that account's queue", async () => {
    h = openJobsHarness();
    const schedules = new ScheduleService({ store: h.store, clock: h.clock, cron: cronCompiler, runs: scheduleRunJobs(h.jobs) });
    await schedules.forAccount(other).put("hourly", { queue: "reports", everySeconds: 60, input: { report: "theirs" } });
    h.clock.advance(61_000);
    expect(await schedules.runDue()).toBe(1);
    const page = await h.jobs.forAccount(other).list("reports", {});
    expect(page.jobs.map((j) => [j.inputJson, j.account])).toEqual([['{"report":"theirs"}', other]]);
    // Nothing was made in the server's own account.
    await expectCode(h.jobs.list("", "reports", {}), "QueueNotFound");
  });

  it("an expired lease of another account's job is retried by its own queue's settings", async () => {
    h = openJobsHarness();
    const theirs = h.jobs.forAccount(other);
    await theirs.updateQueueSettings("work", { maxAttempts: 2 });
    const { job } = await theirs.submit("work", { input: 1 });
    const [leased] = await theirs.lease("work", { leaseSeconds: 1 });
    expect(leased!.id).toBe(job.id);
    h.clock.advance(2_000);
    expect(await h.jobs.expireLeases()).toBe(1);
    expect(await theirs.get(job.id)).toMatchObject({ status: "queued", attempt: 1, account: other });
  });
});
