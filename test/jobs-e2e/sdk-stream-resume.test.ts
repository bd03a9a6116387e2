/**
 * Streamed output through the TypeScript SDK against a real in-process server, the parts
 * sdk-streaming.test.ts leaves out: ctx.emit()'s batching on hand-driven timers (at the turn's end when
 * idle, at once at 100 chunks, behind a request in flight, on ctx.flush() — no wall-clock waits), a 409
 * on the output call losing the lease, and a job.stream() whose connection drops — resumed with
 * Last-Event-ID, or from GET …/output-chunks when the reconnect has no position.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type FetchLike, type JsonValue, LeaseLostError, Sluice, type Worker } from "../../client/src/index.js";
import { type JobsServer, startJobsServer } from "../jobs/http-harness.js";
import { waitFor, within } from "../support/wait.js";
import { gate, ManualTimers } from "../support/gates.js";

/**
 * Global fetch, recording each output request's chunks as it goes out (synchronously, from emit());
 * while `hold` is set, output requests wait for it before they reach the server.
 */
function outputRecorder(): { fetch: FetchLike; batches: JsonValue[][]; hold: Promise<void> | undefined } {
  const recorder: { fetch: FetchLike; batches: JsonValue[][]; hold: Promise<void> | undefined } = {
    batches: [],
    hold: undefined,
    fetch: async (url, init) => {
      if (new URL(url).pathname.endsWith("/output")) {
        recorder.batches.push((JSON.parse(String(init.body)) as { chunks: JsonValue[] }).chunks);
        await recorder.hold;
      }
      return fetch(url, init);
    },
  };
  return recorder;
}

async function collect<T>(it: AsyncIterable<T>, onEach?: (chunk: T, all: T[]) => void): Promise<T[]> {
  const out: T[] = [];
  for await (const c of it) {
    out.push(c);
    onEach?.(c, out);
  }
  return out;
}

let srv: JobsServer | undefined;
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close({ timeoutMs: 0 })));
  await srv?.stop();
  srv = undefined;
});

const rangeOf = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe("streamed output through the SDK: injected timers, a lost lease, reconnects", () => {
  it("on injected timers: sends ctx.emit() chunks at the turn's end when idle, at once at 100, and behind a request in flight as soon as it is answered", async () => {
    srv = await startJobsServer();
    const recorder = outputRecorder();
    const sluice = new Sluice({ url: srv.url, fetch: recorder.fetch });
    const q = sluice.queue("stream-batches");
    const timers = new ManualTimers();
    const seen: number[][] = [];
    // The SDK sends from a promise chain: a turn lets a due request go out (no wall-clock wait).
    const sizes = async (): Promise<number[]> => {
      await new Promise((resolve) => setImmediate(resolve));
      return recorder.batches.map((b) => b.length);
    };
    workers.push(
      q.work(
        async (_job, ctx) => {
          for (const i of rangeOf(0, 99)) ctx.emit(i);
          seen.push(await sizes()); // 99 pending, their send not yet due on the injected timers
          ctx.emit(99);
          seen.push(await sizes()); // the 100th sends the batch at once
          await ctx.flush();
          for (const i of rangeOf(100, 105)) ctx.emit(i);
          timers.advance(0);
          seen.push(await sizes()); // idle: the turn's chunks go together, with no window to wait out
          await ctx.flush();
          const answer = gate();
          recorder.hold = answer.promise;
          ctx.emit(105);
          timers.advance(0);
          seen.push(await sizes()); // one request in flight, unanswered…
          for (const i of rangeOf(106, 109)) ctx.emit(i);
          timers.advance(1_000);
          seen.push(await sizes()); // …so these wait for it, whatever the time
          recorder.hold = undefined;
          answer.open();
          await ctx.flush();
          seen.push(await sizes()); // answered: they went together right after
          ctx.emit(109);
          ctx.emit(110);
          return "done"; // the worker sends the last two before it completes the job
        },
        { timers },
      ),
    );
    const handle = await q.submit({ prompt: "count" });
    const chunks = await within(20_000, collect(handle.stream<number>()));
    expect(seen).toEqual([[], [100], [100, 5], [100, 5, 1], [100, 5, 1], [100, 5, 1, 3]]);
    expect(await sizes()).toEqual([100, 5, 1, 3, 2]);
    expect(chunks).toEqual(rangeOf(0, 111));
    expect(await handle.get()).toMatchObject({ status: "succeeded", output: "done" });
    // Joined after the job ended: every chunk, read back from the server.
    expect(await collect(sluice.jobs.stream<number>(handle.id))).toEqual(rangeOf(0, 111));
  });

  it("a 409 from the output call loses the lease as a heartbeat's would: ctx.signal aborts, emit and flush throw LeaseLostError, nothing is reported", async () => {
    srv = await startJobsServer();
    const sluice = new Sluice({ url: srv.url });
    const q = sluice.queue("stream-lost");
    const flushedFirst = gate();
    const mayGoOn = gate();
    const seen: { flush?: unknown; emit?: unknown; reason?: unknown } = {};
    const handlerDone = gate();
    const errors: string[] = [];
    workers.push(
      q.work(
        async (_job, ctx) => {
          ctx.emit("before");
          await ctx.flush();
          flushedFirst.open();
          await mayGoOn.promise;
          ctx.emit("after");
          seen.flush = await ctx.flush().catch((e: unknown) => e);
          seen.reason = ctx.signal.reason;
          try {
            ctx.emit("later");
          } catch (e) {
            seen.emit = e;
          }
          handlerDone.open();
          return "never reported";
        },
        { leaseSeconds: 5, timers: new ManualTimers(), onError: (err, where) => errors.push(where.phase) },
      ),
    );
    const handle = await q.submit({}, { maxAttempts: 3 });
    await within(10_000, flushedFirst.promise);
    // The lease runs out on the server; another worker takes the job (attempt 2).
    srv.clock.advance(6_000);
    const leased = (await srv.api("POST", "/v1/queues/stream-lost/leases", { max: 1 })).body.jobs;
    expect(leased.map((j: { attempt: number }) => j.attempt)).toEqual([2]);
    mayGoOn.open();
    await within(10_000, handlerDone.promise);
    expect(seen.flush).toBeInstanceOf(LeaseLostError);
    expect(seen.reason).toBeInstanceOf(LeaseLostError);
    expect(seen.emit).toBeInstanceOf(LeaseLostError);
    expect((seen.flush as LeaseLostError).jobId).toBe(handle.id);
    expect(errors).toEqual([]);
    const job = await handle.get();
    expect(job).toMatchObject({ status: "running", attempt: 2 });
    expect((await srv.api("GET", `/v1/jobs/${handle.id}/output-chunks`)).body).toEqual({ attempt: 2, chunks: [], next: 0, done: false });
  });

  it("resumes after a dropped connection with Last-Event-ID: every chunk once, in order", async () => {
    srv = await startJobsServer();
    const eventRequests: Array<string | null> = [];
    const cutOnce = cuttingFetch(eventRequests, { keepPosition: true });
    await resumeScenario(srv, cutOnce, eventRequests);
    expect(eventRequests).toHaveLength(2);
    expect(eventRequests[0]).toBeNull();
    expect(eventRequests[1]).toMatch(/^\d+$/);
  });

  it("falls back to GET …/output-chunks when a reconnect has no position: the chunks emitted meanwhile are read back", async () => {
    srv = await startJobsServer();
    const eventRequests: Array<string | null> = [];
    const cutOnce = cuttingFetch(eventRequests, { keepPosition: false });
    // x4 goes out without waiting for the client: the stream reads x2, x3 back when x4's event shows the gap.
    const reads = await resumeScenario(srv, cutOnce, eventRequests, { waitForClient: false });
    // The SDK asked to resume; the server never saw the position, so it sent a snapshot instead.
    expect(eventRequests).toEqual([null, expect.stringMatching(/^\d+$/)]);
    expect(reads.some((path) => path.includes("output-chunks?from=2"))).toBe(true);
  });
});

interface CuttingFetch {
  fetch: FetchLike;
  /** Resolves once the stream's connection was cut (after its first job.output event). */
  cut: Promise<void>;
  /** Lets the reconnect through (it waits until then). */
  allowReconnect(): void;
  reads: string[];
}

/**
 * Global fetch for a job stream, cutting its first events connection right after its first
 * job.output frame and holding the reconnect until allowed. `keepPosition: false` strips the
 * reconnect's Last-Event-ID, as if the position were lost.
 */
function cuttingFetch(eventRequests: Array<string | null>, opts: { keepPosition: boolean }): CuttingFetch {
  const cut = gate();
  const reconnect = gate();
  const reads: string[] = [];
  const f: FetchLike = async (url, init) => {
    const u = new URL(url);
    if (!u.pathname.endsWith("/events")) {
      reads.push(u.pathname + u.search);
      return fetch(url, init);
    }
    const headers = { ...(init.headers as Record<string, string>) };
    eventRequests.push(headers["last-event-id"] ?? null);
    if (eventRequests.length > 1) {
      await reconnect.promise;
      if (!opts.keepPosition) delete headers["last-event-id"];
      return fetch(url, { ...init, headers });
    }
    const res = await fetch(url, init);
    const reader = res.body!.getReader();
    let text = "";
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        text += new TextDecoder().decode(value);
        const at = text.indexOf("event: job.output");
        const end = at < 0 ? -1 : text.indexOf("\n\n", at);
        if (end < 0) return controller.enqueue(value);
        // Deliver through the end of the job.output frame, then drop the connection.
        const keep = new TextEncoder().encode(text.slice(0, end + 2)).length - (new TextEncoder().encode(text).length - value.length);
        controller.enqueue(value.slice(0, keep));
        void reader.cancel();
        controller.error(new TypeError("terminated"));
        cut.open();
      },
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: f, cut: cut.promise, allowReconnect: reconnect.open, reads };
}

/** x0, x1 before the cut; x2, x3 while disconnected; x4 after the reconnect (once the client has x0–x3, unless told not to wait): the stream yields x0–x4 once each. */
async function resumeScenario(server: JobsServer, cutting: CuttingFetch, eventRequests: Array<string | null>, opts = { waitForClient: true }): Promise<string[]> {
  const worker = new Sluice({ url: server.url });
  const q = worker.queue("stream-resume");
  const whileDown = gate();
  const afterReconnect = gate();
  workers.push(
    q.work(async (_job, ctx) => {
      ctx.emit("x0");
      ctx.emit("x1");
      await ctx.flush();
      await whileDown.promise;
      ctx.emit("x2");
      ctx.emit("x3");
      await ctx.flush();
      cutting.allowReconnect();
      if (opts.waitForClient) await afterReconnect.promise;
      ctx.emit("x4");
      return "ok";
    }),
  );
  const handle = await q.submit({});
  const reader = new Sluice({ url: server.url, fetch: cutting.fetch });
  const chunks = collect(reader.jobs.stream<string>(handle.id), (_c, all) => {
    if (all.length === 4) afterReconnect.open();
  });
  await within(10_000, cutting.cut);
  whileDown.open();
  expect(await within(20_000, chunks)).toEqual(["x0", "x1", "x2", "x3", "x4"]);
  await waitFor(() => eventRequests.length >= 2);
  return cutting.reads;
}
