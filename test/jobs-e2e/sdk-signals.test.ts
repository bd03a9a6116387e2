/**
 * An AbortSignal that is already aborted, against a real server: get, wait and run reject at once
 * with the signal's reason (as RequestOptions.signal documents), and run submits nothing.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Sluice } from "../../client/src/index.js";
import { startJobsServer, type JobsServer } from "../jobs/http-harness.js";

let srv: JobsServer | undefined;
afterAll(async () => {
  await srv?.stop();
});

describe("an already-aborted signal", () => {
  it("rejects jobs.get, jobs.wait and queue.run with its reason; run submits no job", async () => {
    srv = await startJobsServer();
    let requests = 0;
    const sluice = new Sluice({ url: srv.url, fetch: (url, init) => (requests++, fetch(url, init)) });
    const q = sluice.queue("aborted");
    const handle = await q.submit({ n: 1 });
    const reason = new Error("caller gave up");
    const signal = AbortSignal.abort(reason);
    requests = 0;

    await expect(sluice.jobs.get(handle.id, { signal })).rejects.toBe(reason);
    // A timeout the old code waited out (ending in JobWaitTimeoutError); no timeout could hang forever.
    await expect(sluice.jobs.wait(handle.id, { signal, timeoutMs: 60_000 })).rejects.toBe(reason);
    await expect(handle.wait({ signal })).rejects.toBe(reason);
    await expect(q.run({ n: 2 }, { signal, timeoutMs: 60_000 })).rejects.toBe(reason);
    expect(requests).toBe(0);
    expect((await q.list()).jobs.map((j) => j.id)).toEqual([handle.id]);
  });
});
