/**
 * The SDK's submit batching against a real in-process server: one turn's run() and submit()
 * calls share a `POST …/jobs/batch`, each caller still gets its own job and outcome, a slow job
 * never holds back a fast one's answer, and idempotent replay works through a batch.
 */
import { describe, expect, it } from "vitest";
import { type FetchLike, type Job, Sluice, SluiceApiError } from "../../client/src/index.js";
import type { TestServer } from "../support/server.js";
import { useSdkServer } from "../support/sdk-server.js";
import { waitFor, within } from "../support/wait.js";
import { gate } from "../support/gates.js";

let server: TestServer;
/** The worker's side: its requests are not the ones counted. */
let workerSluice: Sluice;
const { freshQueue, track } = useSdkServer("sdk-batch", (started, client) => {
  server = started;
  workerSluice = client;
});

/**
 * A Sluice whose every request is recorded (method and URL) before it goes out. `submits` gives
 * the distinct submit requests in the order first sent: a resend of the same request after a
 * transport error (the SDK retries idempotent calls) is not another way of submitting.
 */
function countingSluice(opts: { batchSubmits?: boolean } = {}): { sluice: Sluice; requests: string[]; submits(queue: string): string[] } {
  const requests: string[] = [];
  const counting: FetchLike = (input, init) => {
    requests.push(`${init.method ?? "GET"} ${input.slice(server.url.length)}`);
    return fetch(input, init);
  };
  const sluice = new Sluice({ url: server.url, fetch: counting, ...opts });
  const submits = (queue: string): string[] => [...new Set(requests.filter((r) => r.startsWith(`POST /v1/queues/${queue}/jobs`)))];
  return { sluice, requests, submits };
}

describe("SDK submit batching, end to end", () => {
  // wire: submit-batching
  it("50 concurrent run() calls all succeed with their own output, in far fewer submit requests", async () => {
    const name = freshQueue();
    track(workerSluice.queue(name).work<{ n: number }, { doubled: number }>(async (job) => ({ doubled: job.input.n * 2 }), { concurrency: 8 }));
    const { sluice, submits } = countingSluice();
    const q = sluice.queue(name);
    const ns = Array.from({ length: 50 }, (_, i) => i);
    const done = await within(20_000, Promise.all(ns.map((n) => q.run<{ n: number }, { doubled: number }>({ n }, { timeoutMs: 15_000 }))), "50 runs");
    for (const [i, job] of done.entries()) expect(job).toMatchObject({ status: "succeeded", input: { n: i }, output: { doubled: i * 2 } });
    expect(new Set(done.map((j) => j.id)).size).toBe(50);
    // One turn's calls: one batch request, held (?wait=), instead of 50 submits.
    expect(submits(name)).toEqual([`POST /v1/queues/${name}/jobs/batch?wait=15`]);
  });

  it("the same 50 calls with batchSubmits: false make 50 submit requests (the count above is the batching's)", async () => {
    const name = freshQueue();
    track(workerSluice.queue(name).work(async () => "ok", { concurrency: 8 }));
    const { sluice, requests } = countingSluice({ batchSubmits: false });
    const q = sluice.queue(name);
    await within(20_000, Promise.all(Array.from({ length: 50 }, (_, n) => q.run({ n }, { timeoutMs: 15_000 }))), "50 runs");
    const submitted = requests.filter((r) => r.startsWith(`POST /v1/queues/${name}/jobs`));
    expect(new Set(submitted)).toEqual(new Set([`POST /v1/queues/${name}/jobs?wait=15`]));
    expect(submitted.length).toBeGreaterThanOrEqual(50);
  });

  // wire: submit-batching
  it("a slow job in the batch does not hold back the answer of a fast one", async () => {
    const name = freshQueue();
    const slowStarted = gate();
    const release = gate();
    track(
      workerSluice.queue(name).work<{ slow: boolean }, string>(
        async (job) => {
          if (!job.input.slow) return "fast done";
          slowStarted.open();
          await release.promise;
          return "slow done";
        },
        { concurrency: 2 },
      ),
    );
    const { sluice, submits } = countingSluice();
    const q = sluice.queue(name);
    let slowSettled = false;
    const slow = q.run<{ slow: boolean }, string>({ slow: true }, { timeoutMs: 30_000 }).finally(() => (slowSettled = true));
    const fast = q.run<{ slow: boolean }, string>({ slow: false }, { timeoutMs: 30_000 });
    try {
      const fastJob = await within(15_000, fast, "the fast run");
      expect(fastJob).toMatchObject({ status: "succeeded", output: "fast done" });
      await within(15_000, slowStarted.promise, "the slow handler's start");
      // The slow job is still running, its run() unanswered, and both went in one request.
      expect(slowSettled).toBe(false);
      const running = await workerSluice.queue(name).list({ status: "running" });
      expect(running.jobs.map((j) => j.input)).toEqual([{ slow: true }]);
      expect(submits(name)).toEqual([`POST /v1/queues/${name}/jobs/batch?wait=30`]);
    } finally {
      release.open();
    }
    expect(await within(15_000, slow, "the slow run")).toMatchObject({ status: "succeeded", output: "slow done" });
  });

  it("concurrent submit() calls return handles whose wait() works", async () => {
    const name = freshQueue();
    const { sluice, submits } = countingSluice();
    const q = sluice.queue(name);
    const handles = await Promise.all([1, 2, 3, 4, 5].map((n) => q.submit<{ n: number }, number>({ n }, { priority: n % 3 })));
    expect(submits(name)).toEqual([`POST /v1/queues/${name}/jobs/batch`]);
    expect(new Set(handles.map((h) => h.id)).size).toBe(5);
    for (const [i, h] of handles.entries()) {
      expect(h.replayed).toBe(false);
      expect(h.queue).toBe(name);
      expect(h.job).toMatchObject({ status: "queued", input: { n: i + 1 }, priority: (i + 1) % 3 });
    }
    track(workerSluice.queue(name).work<{ n: number }, number>(async (job) => job.input.n * 10));
    const done = await within(15_000, Promise.all(handles.map((h) => h.wait({ timeoutMs: 10_000 }))), "the waits");
    expect(done.map((j: Job<{ n: number }, number>) => [j.status, j.output])).toEqual([1, 2, 3, 4, 5].map((n) => ["succeeded", n * 10]));
  });

  it("an idempotencyKey replayed through a batch gives the same job with replayed: true; a reused key with another body fails only its caller", async () => {
    const name = freshQueue();
    const { sluice, submits } = countingSluice();
    const q = sluice.queue(name);
    const first = await q.submit({ p: 1 }, { idempotencyKey: "batch-key-1" });
    expect(first.replayed).toBe(false);

    const [again, fresh, reused] = await Promise.allSettled([
      q.submit({ p: 1 }, { idempotencyKey: "batch-key-1" }),
      q.submit({ p: 2 }, { idempotencyKey: "batch-key-2" }),
      q.submit({ p: 3 }, { idempotencyKey: "batch-key-1" }),
    ]);
    expect(submits(name)).toEqual([`POST /v1/queues/${name}/jobs`, `POST /v1/queues/${name}/jobs/batch`]);
    expect(again).toMatchObject({ status: "fulfilled", value: { id: first.id, replayed: true } });
    expect(fresh).toMatchObject({ status: "fulfilled", value: { replayed: false } });
    expect((fresh as PromiseFulfilledResult<{ id: string }>).value.id).not.toBe(first.id);
    expect(reused.status).toBe("rejected");
    expect((reused as PromiseRejectedResult).reason).toBeInstanceOf(SluiceApiError);
    expect((reused as PromiseRejectedResult).reason).toMatchObject({ code: "IdempotencyKeyReused", status: 422 });
  });

  it("one caller's invalid option fails only that caller, with a lone submit's error", async () => {
    const name = freshQueue();
    const { sluice, submits } = countingSluice();
    const q = sluice.queue(name);
    const [a, bad, c] = await Promise.allSettled([q.submit({ n: 1 }), q.submit({ n: 2 }, { priority: 42 }), q.submit({ n: 3 })]);
    expect(a).toMatchObject({ status: "fulfilled", value: { job: { input: { n: 1 } } } });
    expect(c).toMatchObject({ status: "fulfilled", value: { job: { input: { n: 3 } } } });
    expect(bad.status).toBe("rejected");
    expect((bad as PromiseRejectedResult).reason).toMatchObject({ name: "SluiceApiError", status: 400, message: expect.stringMatching(/priority/) });
    // The batch was tried first; its refusal sent each entry on its own.
    expect(submits(name)[0]).toBe(`POST /v1/queues/${name}/jobs/batch`);
    const page = await q.list();
    expect(page.jobs.map((j) => j.input).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it("calls whose inputs together exceed one request's body limit still each succeed", async () => {
    const name = freshQueue();
    const { sluice } = countingSluice();
    const q = sluice.queue(name);
    // Each input fits a lone submit (1 MiB); five together are past the server's 4 MiB body limit.
    const big = "x".repeat(1_000_000);
    const handles = await within(20_000, Promise.all([1, 2, 3, 4, 5].map((n) => q.submit({ n, big }))), "the big submits");
    expect(new Set(handles.map((h) => h.id)).size).toBe(5);
    await waitFor(async () => (await q.list()).jobs.length === 5, { what: "five jobs listed" });
  });
});
