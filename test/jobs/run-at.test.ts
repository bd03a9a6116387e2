/** A submit's runAt: an absolute time before which the job is not leased (manual clock, real server). */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer;
beforeEach(async () => {
  s = await startJobsServer();
});
afterEach(async () => {
  await s.stop();
});

const iso = (ms: number): string => new Date(ms).toISOString();

async function leaseIds(queue: string): Promise<string[]> {
  const res = await s.api("POST", `/v1/queues/${queue}/leases`, {});
  expect(res.status).toBe(200);
  return (res.body.jobs as Array<{ id: string }>).map((j) => j.id);
}

describe("jobs API: runAt", () => {
  it("is not leased before runAt and is leased once the clock reaches it", async () => {
    const at = s.clock.nowMs() + 3_600_000;
    const res = await s.api("POST", "/v1/queues/later/jobs", { input: 1, runAt: iso(at) });
    expect(res.status).toBe(201);
    expect(res.body.job.availableAt).toBe(iso(at));
    expect(await leaseIds("later")).toEqual([]);
    s.clock.advance(3_599_000);
    expect(await leaseIds("later")).toEqual([]);
    s.clock.advance(1_000);
    expect(await leaseIds("later")).toEqual([res.body.job.id]);
  });

  it("runs a job due months ahead, past the queue's retention period: retention counts from when it is due", async () => {
    const at = s.clock.nowMs() + 200 * 86_400_000;
    const res = await s.api("POST", "/v1/queues/far/jobs", { input: "later", runAt: iso(at) });
    expect(res.status).toBe(201);
    s.clock.advance(199 * 86_400_000);
    expect(await leaseIds("far")).toEqual([]);
    // The retention pass upkeep runs: a job counted from its submit would be gone by now.
    expect(await s.server.queues.expireMessages(await s.server.queues.getQueue("", "far"))).toBe(0);
    s.clock.advance(86_400_000);
    expect(await leaseIds("far")).toEqual([res.body.job.id]);
  });

  it("takes a zone offset, and runs a past time now", async () => {
    const past = await s.api("POST", "/v1/queues/q/jobs", { input: 1, runAt: "2001-01-01T00:00:00+02:00" });
    expect(past.status).toBe(201);
    expect(past.body.job.availableAt).toBe(iso(s.clock.nowMs()));
    expect(await leaseIds("q")).toEqual([past.body.job.id]);
  });

  it("refuses both runAt and delaySeconds, a bad time, and one too far ahead, creating nothing", async () => {
    const now = s.clock.nowMs();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ input: 1, runAt: iso(now + 1000), delaySeconds: 5 }, /runAt or delaySeconds, not both/],
      [{ input: 1, runAt: "tomorrow" }, /runAt must be an RFC 3339 time/],
      [{ input: 1, runAt: "2026-05-01T09:00:00" }, /runAt must be an RFC 3339 time/],
      [{ input: 1, runAt: "2026-02-30T09:00:00Z" }, /runAt must be an RFC 3339 time/],
      [{ input: 1, runAt: iso(now + 366 * 86_400_000) }, /more than 365 days ahead/],
    ];
    for (const [body, message] of cases) {
      const res = await s.api("POST", "/v1/queues/refused/jobs", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe("ValidationFailed");
      expect(res.body.error.message).toMatch(message);
    }
    const list = await s.api("GET", "/v1/queues/refused/jobs");
    expect(list.body.jobs ?? []).toEqual([]);
  });
});
