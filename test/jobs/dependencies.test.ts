/**
 * Job dependencies against a real server: the transcribe → summarise → notify pipeline run by SDK
 * workers (each handler reading its parents' outputs), `waiting` and its events, a failed or
 * canceled parent ending its children with a clear reason (or not: onParentFailure ignore), and
 * submits refused for unknown parents or a cycle among a batch's entries — writing nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type LeasedJob, Sluice, type Worker } from "../../client/src/index.js";
import { waitFor, within } from "../support/wait.js";
import { type Json, type JobsServer, openEventStream, startJobsServer } from "./http-harness.js";

let s: JobsServer;
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
  await s?.stop();
});

async function submit(queue: string, body: Json): Promise<Json> {
  const res = await s.api("POST", `/v1/queues/${queue}/jobs`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.job;
}

async function leaseOne(queue: string): Promise<Json> {
  const jobs = (await s.api("POST", `/v1/queues/${queue}/leases`, { max: 1 })).body.jobs as Json[];
  expect(jobs).toHaveLength(1);
  return jobs[0];
}

describe("dependencies: the transcribe → summarise → notify pipeline", () => {
  it("runs each stage after the one before, each handler working on its parents' outputs", async () => {
    s = await startJobsServer();
    const sluice = new Sluice({ url: s.url });
    const seen: Record<string, unknown> = {};
    // Submitted all at once, before any of it runs: the later stages wait.
    const transcribe = await sluice.queue("transcribe").submit({ audio: "meeting.wav" });
    const summarise = await sluice.queue("summarise").submit({}, { dependsOn: [transcribe.id] });
    const notify = await sluice.queue("notify").submit({ to: "team@example.com" }, { dependsOn: [summarise.id] });
    expect([transcribe.job.status, summarise.job.status, notify.job.status]).toEqual(["queued", "waiting", "waiting"]);
    workers.push(
      sluice.queue("transcribe").work(async (job: LeasedJob<{ audio: string }>) => ({ text: `words of ${job.input.audio}` })),
      sluice.queue("summarise").work(async (job: LeasedJob) => {
        seen.summarise = job.parents;
        const transcript = job.parents![0]!.output as { text: string };
        return { summary: transcript.text.toUpperCase() };
      }),
      sluice.queue("notify").work(async (job: LeasedJob<{ to: string }>) => {
        seen.notify = job.parents;
        return { sent: `${job.input.to}: ${(job.parents![0]!.output as { summary: string }).summary}` };
      }),
    );
    const done = await notify.wait({ timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: "succeeded", output: { sent: "team@example.com: WORDS OF MEETING.WAV" }, dependsOn: [summarise.id], onParentFailure: "fail" });
    expect(seen.summarise).toEqual([{ id: transcribe.id, queue: "transcribe", status: "succeeded", output: { text: "words of meeting.wav" }, error: null }]);
    expect(seen.notify).toEqual([{ id: summarise.id, queue: "summarise", status: "succeeded", output: { summary: "WORDS OF MEETING.WAV" }, error: null }]);
  });
});

describe("dependencies: waiting, and parents that fail", () => {
  it("a child is waiting (job.waiting), then queued (job.queued) when its last parent succeeds", async () => {
    s = await startJobsServer();
    const a = await submit("p", { input: "a" });
    const b = await submit("p", { input: "b" });
    const c = await submit("c", { input: "c", dependsOn: [a.id, b.id] });
    expect(c).toMatchObject({ status: "waiting", availableAt: null, dependsOn: [a.id, b.id], onParentFailure: "fail" });
    const stream = await openEventStream(`${s.url}/v1/events?queue=c&since=0`);
    expect((await within(5_000, stream.next()))?.event).toBe("job.waiting");
    expect((await s.api("GET", "/v1/queues/c")).body.queue.stats.jobs.waiting).toBe(1);
    expect((await s.api("POST", "/v1/queues/c/leases", { max: 1 })).body.jobs).toEqual([]);
    for (const queueJob of [await leaseOne("p"), await leaseOne("p")]) {
      await s.api("POST", `/v1/jobs/${queueJob.id}/complete`, { leaseId: queueJob.leaseId, output: queueJob.input });
    }
    const queued = await within(5_000, stream.next());
    expect(queued).toMatchObject({ event: "job.queued", data: { job: { id: c.id, status: "queued" } } });
    stream.close();
    const leased = await leaseOne("c");
    expect(leased.parents.map((p: Json) => [p.id, p.output])).toEqual([
      [a.id, "a"],
      [b.id, "b"],
    ]);
  });

  it("a failed parent fails the chain below it with the reason; a canceled one cancels; ignore runs anyway", async () => {
    s = await startJobsServer();
    const parent = await submit("p", { input: 1, maxAttempts: 1 });
    const child = await submit("c", { input: 2, dependsOn: [parent.id] });
    const grandchild = await submit("c", { input: 3, dependsOn: [child.id] });
    const lenient = await submit("c", { input: 4, dependsOn: [parent.id], onParentFailure: "ignore" });
    const leased = await leaseOne("p");
    await s.api("POST", `/v1/jobs/${parent.id}/fail`, { leaseId: leased.leaseId, error: { message: "model crashed" }, retryable: false });
    const get = async (id: string): Promise<Json> => (await s.api("GET", `/v1/jobs/${id}`)).body.job;
    expect(await get(child.id)).toMatchObject({ status: "failed", attempt: 0, error: { type: "ParentFailed", message: `Parent job ${parent.id} failed: model crashed` } });
    expect(await get(grandchild.id)).toMatchObject({ status: "failed", error: { type: "ParentFailed", message: `Parent job ${child.id} failed: Parent job ${parent.id} failed: model crashed` } });
    expect(await get(lenient.id)).toMatchObject({ status: "queued" });
    expect((await leaseOne("c")).parents[0]).toMatchObject({ id: parent.id, status: "failed", error: { message: "model crashed" } });
    const other = await submit("p", { input: 5 });
    const waiting = await submit("c", { input: 6, dependsOn: [other.id] });
    await s.api("POST", `/v1/jobs/${other.id}/cancel`);
    expect(await get(waiting.id)).toMatchObject({ status: "canceled", error: { type: "ParentCanceled" } });
    // Submitted after the parent ended: ended at once, with the same reason.
    expect(await submit("c", { input: 7, dependsOn: [parent.id] })).toMatchObject({ status: "failed", error: { type: "ParentFailed" } });
  });

  it("a waiting job can be canceled; its held GET ?wait answers then", async () => {
    s = await startJobsServer();
    const parent = await submit("p", { input: 1 });
    const child = await submit("c", { input: 2, dependsOn: [parent.id] });
    const held = s.api("GET", `/v1/jobs/${child.id}?wait=30`);
    await waitFor(() => s.server.jobs.subscriberCount() > 0);
    await s.api("POST", `/v1/jobs/${child.id}/cancel`);
    expect((await within(5_000, held)).body.job.status).toBe("canceled");
  });
});

describe("dependencies: refused submits", () => {
  it("an unknown parent id refuses the submit (400), writing nothing", async () => {
    s = await startJobsServer();
    await submit("c", { input: 0 });
    const res = await s.api("POST", "/v1/queues/c/jobs", { input: 1, dependsOn: ["6a1f0c3e-0000-4e57-9a51-0d3f7c2b9e10"] });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "ValidationFailed", message: expect.stringContaining("6a1f0c3e-0000-4e57-9a51-0d3f7c2b9e10") });
    expect((await s.api("POST", "/v1/queues/c/jobs", { input: 1, onParentFailure: "ignore" })).status).toBe(400);
    expect((await s.api("GET", "/v1/queues/c/jobs")).body.jobs).toHaveLength(1);
  });

  it("a batch expresses a small DAG by entry references: parents first; a cycle refuses the whole batch", async () => {
    s = await startJobsServer();
    const dag = await s.api("POST", "/v1/queues/b/jobs/batch", {
      jobs: [
        { input: "notify", dependsOn: [{ entry: 1 }] },
        { input: "summarise", dependsOn: [{ entry: 2 }] },
        { input: "transcribe" },
        { input: "x", dependsOn: [{ entry: 2 }], priority: 99 }, // refused by the schema: the whole batch
      ],
    });
    expect(dag.status).toBe(400);
    const ok = await s.api("POST", "/v1/queues/b/jobs/batch", {
      jobs: [{ input: "notify", dependsOn: [{ entry: 1 }] }, { input: "summarise", dependsOn: [{ entry: 2 }] }, { input: "transcribe" }, { input: 1, tenant: "bad tenant" }, { input: 2, dependsOn: [{ entry: 3 }] }],
    });
    expect(ok.status).toBe(200);
    const [notify, summarise, transcribe, bad, orphan] = ok.body.results as Json[];
    expect([notify.status, summarise.status, transcribe.status]).toEqual([201, 201, 201]);
    expect(notify.job.dependsOn).toEqual([summarise.job.id]);
    expect(summarise.job.dependsOn).toEqual([transcribe.job.id]);
    expect([transcribe.job.status, summarise.job.status, notify.job.status]).toEqual(["queued", "waiting", "waiting"]);
    expect(bad.status).toBe(400);
    expect(orphan).toMatchObject({ status: 400, error: { code: "ValidationFailed", message: expect.stringMatching(/^jobs\[4\]\.dependsOn refers to entry 3, which was not submitted: tenant/) } });
    const before = (await s.api("GET", "/v1/queues/b/jobs")).body.jobs.length;
    const cycle = await s.api("POST", "/v1/queues/b/jobs/batch", { jobs: [{ input: 1, dependsOn: [{ entry: 1 }] }, { input: 2, dependsOn: [{ entry: 0 }] }, { input: 3 }] });
    expect(cycle.status).toBe(400);
    expect(cycle.body.error.message).toMatch(/cycle between batch entries: 0 → 1 → 0/);
    expect((await s.api("GET", "/v1/queues/b/jobs")).body.jobs).toHaveLength(before);
    // With ?wait each entry is created in its turn, then held: here until the (manual) clock passes 1 s.
    const base = s.server.jobs.subscriberCount();
    const timers = s.clock.pendingTimers();
    const held = s.api("POST", "/v1/queues/b/jobs/batch?wait=1", { jobs: [{ input: "a" }, { input: "b", dependsOn: [{ entry: 0 }] }] });
    // Held once each hold has read its job and armed its time limit (a read away from subscribing).
    await waitFor(() => s.server.jobs.subscriberCount() === base + 2 && s.clock.pendingTimers() >= timers + 2, { what: "both entries held" });
    s.clock.advance(1_000);
    const waited = await within(10_000, held);
    expect((waited.body as Json[]).map((l) => [l.index, l.status, l.job.status]).sort()).toEqual([
      [0, 201, "queued"],
      [1, 201, "waiting"],
    ]);
  });
});
