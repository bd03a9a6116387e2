/**
 * Reports the server would refuse, and leases it always refuses, against a real server: an output
 * over 1 MiB fails its job at once (not after a lease, twice); a retry delay the fail route would
 * refuse is refused when the RetryableError is made, so the job still gets an error; one refused
 * ack request doesn't switch acks off; a lease refusal no retry can fix stops the worker.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type FetchLike, type LeaseRequest, RetryableError, Sluice, SluiceApiError, type Worker, type WorkerPhase } from "../../client/src/index.js";
import { startJobsServer, type JobsServer } from "../jobs/http-harness.js";
import { within } from "../support/wait.js";

let srv: JobsServer | undefined;
async function server(): Promise<JobsServer> {
  srv ??= await startJobsServer();
  return srv;
}
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => within(10_000, w.close({ timeoutMs: 2_000 }), "worker close")));
});
afterAll(async () => {
  await srv?.stop();
});

interface Sent {
  path: string;
  body: LeaseRequest | undefined;
}

/** Global fetch, recording each request; `refuse` answers a request with that 400 instead of sending it. */
function recordingFetch(refuse: (sent: Sent) => string | undefined = () => undefined): FetchLike & { sent: Sent[] } {
  const sent: Sent[] = [];
  const f = (async (url: string, init: RequestInit) => {
    const entry = { path: new URL(url).pathname, body: typeof init.body === "string" ? (JSON.parse(init.body) as LeaseRequest) : undefined };
    sent.push(entry);
    const message = refuse(entry);
    if (message) return new Response(JSON.stringify({ error: { code: "ValidationFailed", message } }), { status: 400, headers: { "content-type": "application/json" } });
    return fetch(url, init);
  }) as FetchLike & { sent: Sent[] };
  f.sent = sent;
  return f;
}

const carriesAcks = (s: Sent): boolean => s.path.endsWith("/leases") && (s.body?.complete !== undefined || s.body?.fail !== undefined);

describe("reports the server would refuse", () => {
  // wire: outcomes
  it("an output over 1 MiB fails the job at once, not retried, and counts as failed", async () => {
    const { url } = await server();
    const errors: WorkerPhase[] = [];
    const q = new Sluice({ url }).queue("big-output");
    let runs = 0;
    const worker = q.work(
      async () => {
        runs++;
        return "x".repeat(1_048_575); // 1,048,577 bytes as JSON, quotes included
      },
      { waitSeconds: 1, onError: (_err, where) => errors.push(where.phase) },
    );
    workers.push(worker);
    const handle = await q.submit({}, { maxAttempts: 3 });
    const done = await handle.wait({ timeoutMs: 10_000 });
    expect(done).toMatchObject({
      status: "failed",
      attempt: 1,
      error: { type: "NonRetryableError", message: "handler output is 1048577 bytes of JSON; a job's output is at most 1048576 (1 MiB)" },
    });
    await worker.close();
    expect(runs).toBe(1);
    expect(worker.stats).toMatchObject({ completed: 0, failed: 1 });
    expect(errors).toEqual([]);
  });

  it("an output of exactly 1 MiB completes", async () => {
    const { url } = await server();
    const q = new Sluice({ url }).queue("max-output");
    workers.push(q.work(async () => "x".repeat(1_048_574), { waitSeconds: 1 }));
    const done = await (await q.submit({})).wait({ timeoutMs: 10_000 });
    expect(done.status).toBe("succeeded");
    expect((done.output as string).length).toBe(1_048_574);
  });

  it("a retry delay the server would refuse is a RangeError from the handler: the job records it and is retried", async () => {
    const { url } = await server();
    const q = new Sluice({ url }).queue("retry-after");
    const errors: unknown[] = [];
    workers.push(
      q.work(
        async () => {
          throw new RetryableError("rate limited upstream", { retryAfterSeconds: 1.5 }); // a Retry-After in ms / 1000
        },
        { waitSeconds: 1, onError: (err) => errors.push(err) },
      ),
    );
    const done = await (await q.submit({}, { maxAttempts: 1 })).wait({ timeoutMs: 10_000 });
    expect(done).toMatchObject({
      status: "failed",
      error: { type: "RangeError", message: "retryAfterSeconds must be a whole number of seconds in 0–43200, got 1.5 (round it up: Math.ceil)" },
    });
    expect(errors).toEqual([]);
  });

  it("an ack request refused for one bad entry falls back to the routes once, and acks stay on", async () => {
    const { url } = await server();
    let refusals = 0;
    // The server's answer to a malformed entry, not to unknown fields (a server from before acks).
    const clientFetch = recordingFetch((s) => (carriesAcks(s) && refusals++ === 0 ? "body.fail[0].retryAfterSeconds must be integer." : undefined));
    const q = new Sluice({ url, fetch: clientFetch }).queue("acks-stay");
    const worker = q.work(async () => "ok", { concurrency: 1, waitSeconds: 1 });
    workers.push(worker);
    expect((await (await q.submit(1)).wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await (await q.submit(2)).wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    await worker.close();
    expect(clientFetch.sent.filter((s) => s.path.endsWith("/complete"))).toHaveLength(1);
    expect(clientFetch.sent.filter(carriesAcks)).toHaveLength(2);
  });
});

describe("a lease refusal no retry can fix", () => {
  // wire: fatal-lease
  it("stops the worker: `done` rejects with the server's error, told once to onError, no more lease requests", async () => {
    const { url } = await server();
    const clientFetch = recordingFetch();
    const errors: Array<{ err: unknown; phase: WorkerPhase }> = [];
    const worker = new Sluice({ url, fetch: clientFetch }).queue("bad name!").work(async () => "never", {
      concurrency: 4,
      waitSeconds: 1,
      onError: (err, where) => errors.push({ err, phase: where.phase }),
    });
    workers.push(worker);
    const err = await within(10_000, worker.done.then(() => undefined, (e: unknown) => e), "the worker to stop");
    expect(err).toBeInstanceOf(SluiceApiError);
    expect(err).toMatchObject({ code: "ValidationFailed", status: 400 });
    expect(errors.map((e) => e.phase)).toEqual(["lease"]);
    expect(errors[0]!.err).toBe(err);
    const leases = clientFetch.sent.filter((s) => s.path.endsWith("/leases")).length;
    expect(leases).toBeGreaterThanOrEqual(1);
    expect(leases).toBeLessThanOrEqual(4); // one per lease loop at most, never retried
    await within(10_000, worker.close(), "close of a stopped worker");
    expect(clientFetch.sent.filter((s) => s.path.endsWith("/leases"))).toHaveLength(leases);
  });

  it("`done` resolves after an ordinary close()", async () => {
    const { url } = await server();
    const worker = new Sluice({ url }).queue("done-ok").work(async () => "ok", { waitSeconds: 1 });
    workers.push(worker);
    await within(10_000, worker.close(), "close");
    await expect(worker.done).resolves.toBeUndefined();
  });
});
