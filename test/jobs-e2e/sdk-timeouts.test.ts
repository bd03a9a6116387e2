/**
 * A `timeoutMs` that is not a number (NaN from `Number(undefined)`, a string from a config file),
 * against a real server: jobs.wait, job.wait, queue.run and worker.close reject with a RangeError
 * naming it and change nothing — run submits no job, close leaves the worker and its running
 * handler alone. (Before: wait failed as a network timeout, run submitted and waited forever,
 * close cut the running handler off at once and used up its attempt.)
 */
import { afterAll, describe, expect, it } from "vitest";
import { Sluice } from "../../client/src/index.js";
import { startJobsServer, type JobsServer } from "../jobs/http-harness.js";

let srv: JobsServer | undefined;
afterAll(async () => {
  await srv?.stop();
});

const nanMessage = "timeoutMs must be a number of milliseconds (Infinity to wait forever), got NaN";

describe("a timeoutMs that is not a number", () => {
  it("rejects jobs.wait, job.wait and queue.run with a RangeError before any request; run submits no job", async () => {
    srv = await startJobsServer();
    let requests = 0;
    const sluice = new Sluice({ url: srv.url, fetch: (url, init) => (requests++, fetch(url, init)) });
    const q = sluice.queue("bad-timeout");
    const handle = await q.submit({ n: 1 });
    requests = 0;

    await expect(sluice.jobs.wait(handle.id, { timeoutMs: NaN })).rejects.toThrow(new RangeError(nanMessage));
    await expect(handle.wait({ timeoutMs: "30000" as unknown as number })).rejects.toThrow(
      new RangeError('timeoutMs must be a number of milliseconds (Infinity to wait forever), got "30000"'),
    );
    await expect(q.run({ n: 2 }, { timeoutMs: NaN })).rejects.toThrow(new RangeError(nanMessage));
    expect(requests).toBe(0);
    expect((await q.list()).jobs.map((j) => j.id)).toEqual([handle.id]);
  });

  it("rejects worker.close and leaves the worker running: its handler is not cut off, and a good close() still drains it", async () => {
    srv ??= await startJobsServer();
    const sluice = new Sluice({ url: srv.url });
    const q = sluice.queue("bad-close-timeout");
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    let finish!: () => void;
    const handlerMayFinish = new Promise<void>((resolve) => (finish = resolve));
    let aborted = false;
    const worker = q.work(async (_job, ctx) => {
      ctx.signal.addEventListener("abort", () => (aborted = true));
      started();
      await handlerMayFinish;
      return { ok: true };
    });
    const handle = await q.submit({ n: 1 }, { maxAttempts: 1 });
    await handlerStarted;

    await expect(worker.close({ timeoutMs: NaN })).rejects.toThrow(new RangeError(nanMessage));
    expect(aborted).toBe(false);
    expect(worker.stats.active).toBe(1);

    const closed = worker.close();
    finish();
    await closed;
    expect(aborted).toBe(false);
    expect(await handle.get()).toMatchObject({ status: "succeeded", output: { ok: true }, attempt: 1 });
  });
});
