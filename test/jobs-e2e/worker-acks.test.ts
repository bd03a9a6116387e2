/**
 * The SDK worker reporting outcomes on its next lease request (complete + lease next in one
 * request), against a real server, with a fetch that records (and can refuse) what the SDK sends.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type FetchLike, type LeaseRequest, Sluice, type Worker, type WorkerPhase } from "../../client/src/index.js";
import { startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";
import { ManualClock } from "../../src/core/clock.js";
import { gate } from "../support/gates.js";

const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => within(10_000, w.close({ timeoutMs: 2_000 }), "worker close")));
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

interface Sent {
  path: string;
  body: unknown;
}

/**
 * Global fetch, recording each request; `refuse` answers a request 400 instead of sending it, as a
 * server from before acks answers a lease request that carries them.
 */
function recordingFetch(refuse: (sent: Sent) => boolean = () => false): FetchLike & { sent: Sent[] } {
  const sent: Sent[] = [];
  const f = (async (url: string, init: RequestInit) => {
    const entry = { path: new URL(url).pathname, body: typeof init.body === "string" ? JSON.parse(init.body) : undefined };
    sent.push(entry);
    if (refuse(entry)) return new Response(JSON.stringify({ error: { code: "ValidationFailed", message: "body.complete is not a field of this request." } }), { status: 400, headers: { "content-type": "application/json" } });
    return fetch(url, init);
  }) as FetchLike & { sent: Sent[] };
  f.sent = sent;
  return f;
}

const carriesAcks = (s: Sent): boolean => s.path.endsWith("/leases") && ((s.body as LeaseRequest).complete !== undefined || (s.body as LeaseRequest).fail !== undefined);

describe("worker outcomes ride on lease requests", () => {
  // wire: acks
  it("completes and fails jobs through lease requests, never the complete / fail routes", async () => {
    const server = await startTestServer();
    const clientFetch = recordingFetch();
    const sluice = new Sluice({ url: server.url, fetch: clientFetch });
    const q = sluice.queue("acks");
    const submitted = await Promise.all(Array.from({ length: 20 }, (_, n) => q.submit({ n }, { maxAttempts: 1 })));
    const worker = q.work<{ n: number }, number>(
      async (job) => {
        if (job.input.n % 5 === 0) throw new Error(`bad ${job.input.n}`);
        return job.input.n;
      },
      { concurrency: 4, waitSeconds: 1 },
    );
    workers.push(worker);
    const done = await Promise.all(submitted.map((h) => h.wait({ timeoutMs: 10_000 })));
    expect(done.filter((j) => j.status === "succeeded")).toHaveLength(16);
    expect(done.filter((j) => j.status === "failed").map((j) => j.error?.message).sort()).toEqual(["bad 0", "bad 10", "bad 15", "bad 5"]);
    await worker.close();
    expect(worker.stats).toMatchObject({ leased: 20, completed: 16, failed: 4, active: 0 });
    expect(clientFetch.sent.filter((s) => /\/(complete|fail)$/.test(s.path))).toEqual([]);
    const acks = clientFetch.sent.filter(carriesAcks).flatMap((s) => [...((s.body as LeaseRequest).complete ?? []), ...((s.body as LeaseRequest).fail ?? [])]);
    expect(acks.map((a) => a.id).sort()).toEqual(submitted.map((h) => h.id).sort());
  });

  it("an ack the server refuses (its lease expired) goes to onError with the code; the job runs again", async () => {
    const clock = new ManualClock(Date.now());
    const server = await startTestServer({ clock });
    const sluice = new Sluice({ url: server.url });
    const q = sluice.queue("lost");
    const errors: Array<{ code: unknown; phase: WorkerPhase; jobId?: string }> = [];
    const started = gate();
    const finish = gate();
    const handle = await q.submit("x");
    const worker = q.work(
      async () => {
        started.open();
        await finish.promise;
        return "late";
      },
      { concurrency: 1, waitSeconds: 1, onError: (err, where) => errors.push({ code: (err as { code?: unknown }).code, ...where }) },
    );
    workers.push(worker);
    await within(5_000, started.promise, "handler start");
    clock.advance(30_000); // to the end of the 30 s lease; the server's upkeep (every second) then puts the job back
    await waitFor(
      async () => {
        clock.advance(1_000);
        return (await handle.get()).status === "queued";
      },
      { what: "the lease to expire" },
    );
    finish.open();
    expect(await handle.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "succeeded", attempt: 2, output: "late" });
    await worker.close();
    expect(errors).toEqual([{ code: "LeaseExpired", phase: "complete", jobId: handle.id }]);
  });

  it("falls back to the complete route when the server refuses acks (a server from before them), and stops sending them", async () => {
    const server = await startTestServer();
    const clientFetch = recordingFetch(carriesAcks);
    const sluice = new Sluice({ url: server.url, fetch: clientFetch });
    const q = sluice.queue("old-server");
    const first = await q.submit(1);
    const worker = q.work(async () => "ok", { concurrency: 1, waitSeconds: 1 });
    workers.push(worker);
    expect((await first.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    const second = await q.submit(2);
    expect((await second.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    await worker.close();
    expect(clientFetch.sent.filter(carriesAcks)).toHaveLength(1);
    expect(clientFetch.sent.filter((s) => s.path.endsWith("/complete"))).toHaveLength(2);
  });
});
