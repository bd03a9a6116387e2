/**
 * The SDK's workflow helpers against a real server: `sluice.schedules`, and event streams as
 * async iterables that reconnect by themselves and resume with Last-Event-ID — here made to
 * reconnect between submits, while jobs keep changing, without missing or repeating an event.
 */
import { describe, expect, it } from "vitest";
import { type JobEventMessage, Sluice, SluiceApiError, type Timers, systemTimers } from "../../client/src/index.js";
import type { TestServer } from "../support/server.js";
import { useSdkServer } from "../support/sdk-server.js";
import { waitFor, within } from "../support/wait.js";

let server: TestServer;
let sluice: Sluice;
const { freshQueue } = useSdkServer("wf", (started, client) => {
  server = started;
  sluice = client;
});

describe("sluice.schedules", () => {
  it("puts, reads, lists, pauses, resumes and deletes a schedule", async () => {
    const queue = freshQueue();
    const put = await sluice.schedules.put("sdk-nightly", { queue, cron: "0 3 * * *", timezone: "Asia/Tokyo", input: { report: "daily" }, options: { priority: 3 } });
    expect(put).toMatchObject({ name: "sdk-nightly", queue, cron: "0 3 * * *", everySeconds: null, paused: false, catchUp: "latest" });
    expect(put.nextRuns).toHaveLength(5);
    expect(put.nextRuns.every((t) => t.endsWith("T18:00:00.000Z"))).toBe(true); // 03:00 in Tokyo
    expect((await sluice.schedules.get("sdk-nightly")).options).toEqual({ priority: 3 });
    expect((await sluice.schedules.list()).schedules.map((s) => s.name)).toContain("sdk-nightly");
    expect(await sluice.schedules.pause("sdk-nightly")).toMatchObject({ paused: true, nextRuns: [] });
    expect((await sluice.schedules.resume("sdk-nightly")).paused).toBe(false);
    await sluice.schedules.delete("sdk-nightly");
    const gone = await sluice.schedules.get("sdk-nightly").catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(SluiceApiError);
    expect((gone as SluiceApiError).code).toBe("ScheduleNotFound");
  });

  it("refuses a bad definition with the server's reason", async () => {
    const err = await sluice.schedules.put("bad", { queue: freshQueue(), cron: "61 * * * *", input: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SluiceApiError);
    expect((err as SluiceApiError).message).toMatch(/minute/);
  });
});

describe("event streams", () => {
  it("sluice.events() resumes by itself after every reconnect: each event once, in order", async () => {
    const queue = freshQueue();
    const stop = new AbortController();
    // The test makes the stream reconnect between submits, by a dropped connection or by its idle
    // timer, rather than by waiting: a short real idle timeout would starve a slow replay under load.
    const idleTimeoutMs = 123_456;
    let fireIdle: (() => void) | undefined;
    const timers: Timers = {
      nowMs: systemTimers.nowMs,
      schedule(delayMs, fn) {
        if (delayMs !== idleTimeoutMs) return systemTimers.schedule(delayMs, fn);
        const fire = (): void => {
          if (fireIdle === fire) fireIdle = undefined;
          fn();
        };
        fireIdle = fire;
        return () => {
          if (fireIdle === fire) fireIdle = undefined;
        };
      },
    };
    let connects = 0;
    let dropConnection: (() => void) | undefined;
    const droppable = async (input: string, init: RequestInit): Promise<Response> => {
      const res = await fetch(input, init);
      if (!input.includes("/v1/events") || res.body === null) return res;
      connects++;
      const upstream = res.body.getReader();
      let ended = false;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          dropConnection = () => {
            if (!ended) controller.close();
            ended = true;
            void upstream.cancel();
          };
        },
        async pull(controller) {
          const { done, value } = await upstream.read();
          if (ended) return;
          if (done) {
            ended = true;
            controller.close();
          } else controller.enqueue(value);
        },
      });
      return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    const client = new Sluice({ url: server.url, fetch: droppable, timers });
    const stream = client.events({ queue, signal: stop.signal, idleTimeoutMs });
    const seen: JobEventMessage[] = [];
    const reading = (async () => {
      for await (const e of stream) seen.push(e);
    })();
    await waitFor(() => connects === 1, { what: "the stream to connect" });
    const submitted: string[] = [];
    for (let i = 0; i < 20; i++) {
      submitted.push((await sluice.queue(queue).submit({ n: i })).id);
      if (i % 5 === 4 && i < 19) {
        // Three reconnects in the run, each between submits: the events after one come on the next connection.
        const before = connects;
        if (i === 9) fireIdle?.();
        else dropConnection?.();
        await waitFor(() => connects > before, { what: "the stream to reconnect" });
      }
    }
    await waitFor(() => seen.length >= 20, { what: "20 events", timeoutMs: 20_000 });
    stop.abort();
    await reading;
    expect(connects).toBe(4);
    expect(seen.map((e) => e.job.id)).toEqual(submitted);
    expect(seen.every((e) => e.type === "job.queued")).toBe(true);
    const ids = seen.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(20);
  });

  it("sluice.jobs.events(id) gives the snapshot, then the job's events, and ends after the terminal one", async () => {
    const queue = freshQueue();
    const handle = await sluice.queue(queue).submit({ n: 1 });
    const types: string[] = [];
    const reading = (async () => {
      for await (const e of sluice.jobs.events(handle.id)) types.push(e.type);
    })();
    const worker = sluice.queue(queue).work(async () => "done");
    await within(20_000, reading);
    await worker.close();
    expect(types).toEqual(["job.snapshot", "job.started", "job.succeeded"]);
    // Resumed after its terminal event (the server answers 204): the iterator ends, empty.
    const after: string[] = [];
    const ids: string[] = [];
    for await (const e of sluice.jobs.events(handle.id, { since: "0" })) ids.push(e.id!); // ends after job.succeeded
    await within(20_000, (async () => {
      for await (const e of sluice.jobs.events(handle.id, { since: ids.at(-1)! })) after.push(e.type);
    })(), "the resumed stream to end");
    expect(after).toEqual([]);
  });
});
