/**
 * The durable job event log over SSE, against a real server on a manual clock: every event's id
 * is durable, and a stream resumed with Last-Event-ID (or ?since=) — after a disconnect, after a
 * restart on the same data dir — gets exactly the events after it, in order: nothing missed,
 * nothing twice. Retention prunes old events, and a stream resuming below them is told so.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/index.js";
import { within } from "../support/wait.js";
import { type Json, type JobsServer, openEventStream, startJobsServer } from "./http-harness.js";

let s: JobsServer;
const streams: Array<{ close(): void }> = [];
afterEach(async () => {
  for (const st of streams.splice(0)) st.close();
  await s?.stop();
});

type Stream = Awaited<ReturnType<typeof openEventStream>>;

async function open(path: string, headers: Record<string, string> = {}): Promise<Stream> {
  const stream = await openEventStream(`${s.url}${path}`, headers);
  streams.push(stream);
  expect(stream.status).toBe(200);
  return stream;
}

/** The next `n` events of a stream, as [id, type, job id]. */
async function take(stream: Stream, n: number): Promise<Array<{ id?: string; event: string; data: Json }>> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const e = await within(10_000, stream.next());
    if (!e) throw new Error(`the stream ended after ${i} of ${n} events`);
    out.push(e);
  }
  return out;
}

const brief = (events: Array<{ id?: string; event: string; data: Json }>): string[] => events.map((e) => `${e.event} ${e.data.job.input.n}`);

async function submit(queue: string, n: number): Promise<Json> {
  return (await s.api("POST", `/v1/queues/${queue}/jobs`, { input: { n } })).body.job;
}

/** Leases one job of the queue and completes it with `output`. */
async function runOne(queue: string, output: unknown): Promise<Json> {
  const [job] = (await s.api("POST", `/v1/queues/${queue}/leases`, { max: 1 })).body.jobs;
  await s.api("POST", `/v1/jobs/${job.id}/complete`, { leaseId: job.leaseId, output });
  return job;
}

describe("the durable job event log over SSE", () => {
  it("a stream resumed with Last-Event-ID after a disconnect gets exactly what it missed, in order", async () => {
    s = await startJobsServer();
    const first = await open("/v1/events?queue=q");
    await submit("q", 1);
    await submit("q", 2);
    const seen = await take(first, 2);
    expect(brief(seen)).toEqual(["job.queued 1", "job.queued 2"]);
    expect(Number(seen[1]!.id)).toBeGreaterThan(Number(seen[0]!.id));
    first.close();
    // Missed while disconnected: a completion, a submit to another queue (not this stream's), a submit.
    await runOne("q", "one");
    await submit("other", 9);
    await submit("q", 3);
    const resumed = await open("/v1/events?queue=q", { "Last-Event-ID": seen[1]!.id! });
    const missed = await take(resumed, 3);
    expect(brief(missed)).toEqual(["job.started 1", "job.succeeded 1", "job.queued 3"]);
    expect(missed[1]!.data.job.output).toBe("one");
    // Live from there on, ids still growing.
    await submit("q", 4);
    const [live] = await take(resumed, 1);
    expect(brief([live!])).toEqual(["job.queued 4"]);
    const ids = [...seen, ...missed, live!].map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("resumes across a server restart on the same data dir: nothing missed, nothing repeated, ids keep growing", async () => {
    s = await startJobsServer();
    const dataDir = s.dataDir;
    const before = await open("/v1/events");
    await submit("q", 1);
    const [queued1] = await take(before, 1);
    await submit("q", 2);
    await runOne("q", "done");
    const lastSeen = queued1!.id!;
    await s.stop({ keepDataDir: true });
    streams.splice(0);
    s = await startJobsServer({ dataDir });
    await submit("q", 3);
    const after = await open("/v1/events", { "Last-Event-ID": lastSeen });
    const events = await take(after, 4);
    expect(brief(events)).toEqual(["job.queued 2", "job.started 1", "job.succeeded 1", "job.queued 3"]);
    expect(Number(events[0]!.id)).toBeGreaterThan(Number(lastSeen));
    // ?since= is the same position for a client that kept the id itself.
    const since = await open(`/v1/events?since=${events[1]!.id}`);
    expect(brief(await take(since, 2))).toEqual(["job.succeeded 1", "job.queued 3"]);
  });

  it("a job's stream: a snapshot without an id, then its events; resumed, only the events after the id", async () => {
    s = await startJobsServer();
    const job = await submit("q", 7);
    const stream = await open(`/v1/jobs/${job.id}/events`);
    const [snapshot] = await take(stream, 1);
    expect(snapshot).toMatchObject({ event: "job.snapshot" });
    expect(snapshot!.id).toBeUndefined();
    const [leased] = (await s.api("POST", "/v1/queues/q/leases", { max: 1 })).body.jobs;
    const [started] = await take(stream, 1);
    expect(started!.event).toBe("job.started");
    stream.close();
    await s.api("POST", `/v1/jobs/${job.id}/heartbeat`, { leaseId: leased.leaseId, progress: 0.5 });
    await s.api("POST", `/v1/jobs/${job.id}/complete`, { leaseId: leased.leaseId, output: 42 });
    const resumed = await open(`/v1/jobs/${job.id}/events`, { "Last-Event-ID": started!.id! });
    expect((await take(resumed, 2)).map((e) => [e.event, e.data.job.progress])).toEqual([
      ["job.progress", 0.5],
      ["job.succeeded", 0.5],
    ]);
    // The stream ends after the terminal event; resumed past it, there is nothing left (204).
    expect(await within(5_000, resumed.next())).toBeUndefined();
    const done = await fetch(`${s.url}/v1/jobs/${job.id}/events`, { headers: { "last-event-id": "999999999" } });
    expect(done.status).toBe(204);
  });

  it("retention prunes old events; a stream resuming below them is told what was lost, then gets the rest", async () => {
    const clock = new ManualClock(Date.now());
    s = await startJobsServer({ clock });
    await submit("q", 1);
    const stream = await open("/v1/events?since=0");
    const [old] = await take(stream, 1);
    stream.close();
    // Past the default 24 h retention: the maintenance loop's minutely prune runs as the clock moves.
    clock.advance(86_400_000 + 61_000);
    await submit("q", 2);
    await s.server.jobs.pruneEvents(); // whatever that pass had left (it runs on its own turn)
    const resumed = await open("/v1/events?since=0");
    const [truncated, next] = await take(resumed, 2);
    expect(truncated).toMatchObject({ event: "truncated", data: { type: "truncated", afterId: 0 } });
    expect(truncated!.data.prunedThroughId).toBeGreaterThanOrEqual(Number(old!.id));
    expect(brief([next!])).toEqual(["job.queued 2"]);
  });

  it("many streams at once each get every event once, whatever their position", async () => {
    s = await startJobsServer();
    for (let n = 1; n <= 5; n++) await submit("q", n);
    const fromStart = await open("/v1/events?since=0");
    const head = await take(fromStart, 5);
    const fromMiddle = await open(`/v1/events?since=${head[2]!.id}`);
    const fresh = await open("/v1/events?queue=q");
    for (let n = 6; n <= 25; n++) await submit("q", n);
    const a = await take(fromStart, 20);
    const b = await take(fromMiddle, 22);
    const c = await take(fresh, 20);
    const ns = (events: typeof a): number[] => events.map((e) => e.data.job.input.n);
    expect(ns(a)).toEqual(Array.from({ length: 20 }, (_, i) => i + 6));
    expect(ns(b)).toEqual(Array.from({ length: 22 }, (_, i) => i + 4));
    expect(ns(c)).toEqual(Array.from({ length: 20 }, (_, i) => i + 6));
  });
});
