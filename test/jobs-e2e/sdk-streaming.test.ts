/**
 * Streamed output through the SDK against a real server: ctx.emit batches (what one turn emitted,
 * up to 1,000 chunks a request), ctx.flush, job.stream() / queue.stream() in order from the first chunk,
 * a failed job's error thrown after its chunks, and a retry's new attempt replacing the old one.
 */
import { describe, expect, it } from "vitest";
import { JobFailedError, NonRetryableError, RetryableError, type Sluice, type JsonValue } from "../../client/src/index.js";
import type { TestServer } from "../support/server.js";
import { useSdkServer } from "../support/sdk-server.js";
import { within } from "../support/wait.js";
import { gate } from "../support/gates.js";

let server: TestServer;
let sluice: Sluice;
const { freshQueue, track } = useSdkServer("stream", (started, client) => {
  server = started;
  sluice = client;
});

async function collect<T>(stream: AsyncIterable<T>, onEach?: (value: T, all: T[]) => void): Promise<T[]> {
  const all: T[] = [];
  for await (const value of stream) {
    all.push(value);
    onEach?.(value, all);
  }
  return all;
}


describe("streamed output", () => {
  it("queue.stream() gives every chunk in order; what is emitted in one turn goes in one request, before the job completes", async () => {
    const q = sluice.queue(freshQueue());
    track(
      q.work<{ n: number }, string>(async (job, ctx) => {
        for (let i = 0; i < job.input.n; i++) ctx.emit(`t${i}`);
        return "done";
      }),
    );
    const chunks = await within(20_000, collect(q.stream<string>({ n: 2_500 })), "the stream");
    expect(chunks).toEqual(Array.from({ length: 2_500 }, (_, i) => `t${i}`));
    const [job] = (await q.list({ status: "succeeded" })).jobs;
    const sizes: number[] = [];
    for await (const e of sluice.events({ queue: q.name, since: "0" })) {
      if (e.type === "job.output") sizes.push((e as unknown as { chunks: unknown[] }).chunks.length);
      if (e.type === "job.succeeded") break;
    }
    // Up to the server's 1,000 chunks a request.
    expect(sizes).toEqual([1_000, 1_000, 500]);
    const stored = await fetch(`${server.url}/v1/jobs/${job!.id}/output-chunks?from=2000`).then((r) => r.json() as Promise<{ chunks: string[]; done: boolean }>);
    expect([stored.chunks.length, stored.chunks[0]]).toEqual([500, "t2000"]);
    expect(stored.done).toBe(true);
  });

  it("a few chunks go out on the 50 ms timer while the handler still runs; ctx.flush() resolves once they are stored", async () => {
    const q = sluice.queue(freshQueue());
    const seen = gate();
    const flushed = gate();
    const handle = await q.submit("go");
    track(
      q.work(async (_job, ctx) => {
        ctx.emit({ token: "Hel" });
        ctx.emit({ token: "lo" });
        await seen.promise; // the follower got both while the handler was still running
        ctx.emit({ token: "!" });
        await ctx.flush();
        flushed.open();
        return null;
      }),
    );
    const chunks = collect(handle.stream<{ token: string }>(), (_c, all) => {
      if (all.length === 2) seen.open();
    });
    await within(10_000, flushed.promise, "the flush");
    const stored = await fetch(`${server.url}/v1/jobs/${handle.id}/output-chunks`).then((r) => r.json() as Promise<{ chunks: JsonValue[] }>);
    expect(stored.chunks).toEqual([{ token: "Hel" }, { token: "lo" }, { token: "!" }]);
    expect(await within(10_000, chunks, "the stream")).toEqual([{ token: "Hel" }, { token: "lo" }, { token: "!" }]);
  });

  it("a stream started after the job ended reads every chunk; a failed job's error is thrown after them", async () => {
    const q = sluice.queue(freshQueue());
    const handle = await q.submit("x", { maxAttempts: 1 });
    track(
      q.work(async (_job, ctx) => {
        ctx.emit(1);
        ctx.emit(2);
        throw new NonRetryableError("model ran out of memory");
      }),
    );
    await handle.wait({ timeoutMs: 10_000 });
    const got: JsonValue[] = [];
    const error = await collect(handle.stream(), (c) => got.push(c)).catch((e: unknown) => e);
    expect(got).toEqual([1, 2]);
    expect(error).toBeInstanceOf(JobFailedError);
    expect((error as JobFailedError).error).toMatchObject({ message: "model ran out of memory" });
  });

  it("a retry's new attempt replaces the abandoned one: onNewAttempt, then its chunks from the first", async () => {
    const q = sluice.queue(freshQueue());
    const firstSeen = gate();
    const handle = await q.submit("x", { maxAttempts: 2 });
    const newAttempts: number[] = [];
    const chunks = collect(handle.stream<string>({ onNewAttempt: (n) => newAttempts.push(n) }), (_c, all) => {
      if (all.length === 2) firstSeen.open();
    });
    track(
      q.work(async (job, ctx) => {
        if (job.attempt === 1) {
          ctx.emit("a1");
          ctx.emit("a2");
          await firstSeen.promise;
          throw new RetryableError("flaky GPU", { retryAfterSeconds: 0 });
        }
        ctx.emit("b1");
        return "ok";
      }),
    );
    expect(await within(15_000, chunks, "the stream")).toEqual(["a1", "a2", "b1"]);
    expect(newAttempts).toEqual([2]);
  });

  it("ctx.emit refuses what JSON cannot carry, at once", async () => {
    const q = sluice.queue(freshQueue());
    const handle = await q.submit("x");
    let thrown: unknown;
    track(
      q.work(async (_job, ctx) => {
        try {
          ctx.emit(undefined as unknown as JsonValue);
        } catch (err) {
          thrown = err;
        }
        return "ok";
      }),
    );
    await handle.wait({ timeoutMs: 10_000 });
    expect(thrown).toBeInstanceOf(TypeError);
  });
});
