/**
 * worker.close() against a real server: a job leased while close() begins is released (its
 * attempt given back) before close() resolves, and close({ timeoutMs }) hands back a job whose
 * handler ignores ctx.signal — the attempt counted — and stops waiting for that handler. The
 * drain timeout runs on hand-driven timers: nothing here waits on wall time to pass.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type FetchLike, type LeaseRequest, Sluice, type Worker } from "../../client/src/index.js";
import { startJobsServer, type JobsServer } from "../jobs/http-harness.js";
import { within } from "../support/wait.js";
import { gate, ManualTimers } from "../support/gates.js";

const servers: JobsServer[] = [];
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => within(10_000, w.close({ timeoutMs: 2_000 }), "worker close")));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function server(): Promise<JobsServer> {
  const s = await startJobsServer();
  servers.push(s);
  return s;
}

interface Sent {
  path: string;
  body: LeaseRequest & Record<string, unknown>;
}

/** Global fetch, recording each request and calling `onSend` as it goes out. */
function recordingFetch(onSend: (sent: Sent) => void = () => {}): FetchLike & { sent: Sent[] } {
  const sent: Sent[] = [];
  const f = ((url: string, init: RequestInit) => {
    const entry = { path: new URL(url).pathname, body: typeof init.body === "string" ? JSON.parse(init.body) : undefined };
    sent.push(entry);
    const answer = fetch(url, init);
    onSend(entry);
    return answer;
  }) as FetchLike & { sent: Sent[] };
  f.sent = sent;
  return f;
}

describe("close() hands back jobs leased as it began", () => {
  // wire: close
  it("waits for the release of a job that an in-flight ack request leased; the job keeps its only attempt", async () => {
    const srv = await server();
    const a = (await srv.api("POST", "/v1/queues/close-race/jobs", { input: "A", maxAttempts: 1 })).body.job;
    const b = (await srv.api("POST", "/v1/queues/close-race/jobs", { input: "B", maxAttempts: 1 })).body.job;
    let closing: Promise<void> | undefined;
    // close() begins (a SIGTERM, say) the moment A's outcome goes out on a request that also asks for B.
    const clientFetch = recordingFetch((s) => {
      if (s.path.endsWith("/leases") && s.body.complete?.length) closing ??= worker.close();
    });
    const ran: string[] = [];
    const worker: Worker = new Sluice({ url: srv.url, fetch: clientFetch }).queue("close-race").work(
      async (job) => {
        ran.push(job.input as string);
        return "ok";
      },
      { concurrency: 1, waitSeconds: 1 },
    );
    workers.push(worker);
    await within(10_000, waitUntil(() => closing !== undefined), "the ack-carrying lease request");
    await within(10_000, closing!, "close");

    // Right as close() resolves (a CLI exits here), B is back in the queue, its attempt given back.
    expect(ran).toEqual(["A"]);
    expect((await srv.api("GET", `/v1/jobs/${a.id}`)).body.job.status).toBe("succeeded");
    expect((await srv.api("GET", `/v1/jobs/${b.id}`)).body.job).toMatchObject({ status: "queued", attempt: 0, error: null });
    expect(worker.stats).toMatchObject({ leased: 2, completed: 1, released: 1, failed: 0, active: 0 });
    expect(clientFetch.sent.filter((s) => s.path === `/v1/jobs/${b.id}/release`)).toHaveLength(1);
    expect(clientFetch.sent.filter((s) => s.path.endsWith("/fail"))).toEqual([]);
  });
});

describe("close({ timeoutMs })", () => {
  // wire: close
  it("hands back a job whose handler ignores ctx.signal, resolves without it, and ignores its late result", async () => {
    const srv = await server();
    const timers = new ManualTimers();
    const clientFetch = recordingFetch();
    const q = new Sluice({ url: srv.url, fetch: clientFetch }).queue("close-timeout");
    const started = gate();
    const finish = gate();
    let handlerReturned = false;
    const worker = q.work(
      async () => {
        started.open();
        await finish.promise; // a model call that doesn't take a signal
        handlerReturned = true;
        return "late";
      },
      { waitSeconds: 1, timers },
    );
    workers.push(worker);
    const handle = await q.submit({}, { maxAttempts: 3 });
    await within(10_000, started.promise, "handler start");

    let closed = false;
    const closing = worker.close({ timeoutMs: 5_000 }).then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    timers.advance(5_000);
    await within(10_000, closing, "close after its timeout");

    // Handed back through fail: the handler ran, so the attempt counts (a release would give it back).
    expect(handlerReturned).toBe(false);
    expect(await handle.get()).toMatchObject({ status: "queued", attempt: 1, error: { type: "WorkerClosingError" } });
    expect(worker.stats).toMatchObject({ released: 1, completed: 0, active: 0 });

    // No more heartbeats for it, and its late result goes nowhere.
    const sentAtClose = clientFetch.sent.length;
    timers.advance(60_000);
    finish.open();
    await waitUntil(() => handlerReturned);
    await new Promise((r) => setImmediate(r));
    expect(clientFetch.sent.slice(sentAtClose)).toEqual([]);
    expect(await handle.get()).toMatchObject({ status: "queued", output: null });
  });
});

/** Resolves with fn()'s first defined, truthy value, checking once per event-loop turn. */
async function waitUntil<T>(fn: () => T | undefined | false): Promise<T> {
  for (;;) {
    const value = fn();
    if (value !== undefined && value !== false) return value;
    await new Promise((r) => setImmediate(r));
  }
}
