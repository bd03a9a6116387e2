/**
 * The SDK's workflow helpers against a real server: `sluice.schedules`, and event streams as
 * async iterables that reconnect by themselves and resume with Last-Event-ID — here made to
 * reconnect every few hundred milliseconds, while jobs keep changing, without missing or
 * repeating an event.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JobEventMessage, Sluice, SluiceApiError } from "../../client/src/index.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { waitFor, within } from "../support/wait.js";

let server: TestServer;
let sluice: Sluice;
let queueSeq = 0;
const freshQueue = (): string => `wf-${process.pid}-${++queueSeq}`;

beforeAll(async () => {
  server = await startTestServer();
  sluice = new Sluice({ url: server.url });
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
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
    // Counts the stream's (re)connections, to submit between reconnects rather than after a sleep.
    let connects = 0;
    const counting = (input: string, init: RequestInit): Promise<Response> => {
      if (input.includes("/v1/events")) connects++;
      return fetch(input, init);
    };
    const client = new Sluice({ url: server.url, fetch: counting });
    // A stream taken for dead after 300 ms without a byte: it reconnects over and over as the test runs.
    const stream = client.events({ queue, signal: stop.signal, idleTimeoutMs: 300 });
    const seen: JobEventMessage[] = [];
    const reading = (async () => {
      for await (const e of stream) seen.push(e);
    })();
    const submitted: string[] = [];
    for (let i = 0; i < 20; i++) {
      submitted.push((await sluice.queue(queue).submit({ n: i })).id);
      if (i % 5 === 4) {
        // Four reconnects in the run, each between submits: the events after one come on the next connection.
        const before = connects;
        await waitFor(() => connects > before, { what: "the stream to reconnect" });
      }
    }
    await waitFor(() => seen.length >= 20, { what: "20 events", timeoutMs: 20_000 });
    stop.abort();
    await reading;
    expect(connects).toBeGreaterThanOrEqual(5);
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
