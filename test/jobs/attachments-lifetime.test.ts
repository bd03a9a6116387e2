/**
 * How long attachments live (docs/jobs-api.md, "Attachments"), on the injected clock: a blob
 * nothing references is deleted 24 h after its upload, bytes and record; a blob a job holds
 * outlives that, and goes — inputs and outputs — once the job is pruned.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { Json } from "./http-harness.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { waitFor } from "../support/wait.js";

afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

const hourMs = 3_600_000;

async function api(s: TestServer, method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${s.url}${path}`, { method, headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Json) };
}

async function upload(s: TestServer, bytes: string): Promise<string> {
  const made = (await api(s, "POST", "/v1/blobs", { contentType: "text/plain" })).json;
  expect((await fetch(made.uploadUrl as string, { method: "PUT", body: bytes })).status).toBe(200);
  return made.blobId as string;
}

it("sweeps a blob nothing references 24 h after upload, and a job's blobs once the job is pruned", async () => {
  const clock = new ManualClock(Date.parse("2026-11-29T00:00:00Z"));
  const s = await startTestServer({ clock });
  const file = (id: string) => join(s.dataDir, "blobs", id);
  // Passes of the sweep run on the clock: move it, then give the pass it fired time to finish.
  const passes = async (ms: number, until: () => Promise<boolean>, what: string) => {
    clock.advance(ms);
    await waitFor(async () => (await until()) || (clock.advance(61_000), false), { timeoutMs: 20_000, intervalMs: 50, what });
  };
  const stray = await upload(s, "nobody wants me");
  const strayUrl = (await api(s, "GET", `/v1/blobs/${stray}`)).json.downloadUrl as string;
  const input = await upload(s, "an input");
  const job = (await api(s, "POST", "/v1/queues/life/jobs", { input: 1, attachments: { doc: input } })).json.job;
  const leased = (await api(s, "POST", "/v1/queues/life/leases", { max: 1, leaseSeconds: 3600 })).json.jobs[0];
  expect(leased.id).toBe(job.id);
  const output = await upload(s, "an output");
  expect((await api(s, "POST", `/v1/jobs/${job.id}/complete`, { leaseId: leased.leaseId, outputAttachments: { out: output } })).status).toBe(200);

  // 23 h on (past the attach check's hour, when the sweep found the job's blobs held): all there.
  clock.advance(23 * hourMs);
  expect((await api(s, "GET", `/v1/blobs/${stray}`)).status).toBe(200);
  // Past 24 h: the stray blob goes, bytes and record; the job's stay.
  await passes(hourMs + 1000, async () => (await api(s, "GET", `/v1/blobs/${stray}`)).status === 404, "the stray blob swept");
  expect(existsSync(file(stray))).toBe(false);
  // Its URL says it is gone (before saying it expired).
  expect((await fetch(strayUrl)).status).toBe(404);
  for (const id of [input, output]) {
    expect((await api(s, "GET", `/v1/blobs/${id}`)).status).toBe(200);
    expect(existsSync(file(id))).toBe(true);
  }
  // The job is pruned after its queue's resultTtlSeconds (7 days): its blobs go with it.
  await passes(7 * 24 * hourMs, async () => (await api(s, "GET", `/v1/jobs/${job.id}`)).status === 404, "the job pruned");
  await passes(61_000, async () => (await api(s, "GET", `/v1/blobs/${output}`)).status === 404 && (await api(s, "GET", `/v1/blobs/${input}`)).status === 404, "the job's blobs swept");
  expect(existsSync(file(input))).toBe(false);
  expect(existsSync(file(output))).toBe(false);
});
