/**
 * examples/pipeline (README) run as a user would: the script, as a child process, against a real
 * server — its output is the README's.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { type JobsServer, startJobsServer } from "./http-harness.js";

const run = promisify(execFile);
let s: JobsServer;
afterEach(async () => {
  await s?.stop();
});

describe("examples/pipeline", () => {
  it("transcribes, summarises and notifies, each stage after the one before", async () => {
    s = await startJobsServer();
    const { stdout } = await run(process.execPath, ["examples/pipeline/pipeline.js", s.url], { cwd: repoRoot, timeout: 60_000 });
    expect(stdout.trim().split("\n")).toEqual([
      "submitted: transcribe queued, summarise waiting, notify waiting",
      "To team@example.com: Yesterday we moved the embedding workers onto the new GPU nodes, and queue latency dropped by half. The summarisation model still times out on very long meeting recordings, so we will split recordings into ten minute chunks.",
    ]);
    const notify = (await s.api("GET", "/v1/queues/notify/jobs")).body.jobs[0];
    expect(notify).toMatchObject({ status: "succeeded", dependsOn: [expect.any(String)] });
  });
});
