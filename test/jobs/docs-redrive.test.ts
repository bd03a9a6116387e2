/**
 * docs/jobs-api.md's redrive, as written: a job that failed for good stays `failed` in its queue
 * while its message sits in `<queue>-dlq`; each documented command — the `sluice` CLI's and the
 * `curl` (replayed with fetch) — moves the message back, and the job runs again, its attempts
 * starting over.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { waitFor } from "../support/wait.js";
import { runCli } from "../jobs-e2e/workers.js";
import { type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
});

/** The lines of the doc's ```bash blocks that redrive, without their comments. */
function documentedRedrives(): string[] {
  const doc = readFileSync(join(repoRoot, "docs/jobs-api.md"), "utf8");
  const lines = [...doc.matchAll(/```bash\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split("\n"));
  return lines.filter((l) => l.includes("redrive")).map((l) => l.replace(/\s+#.*$/, ""));
}

/** Runs one documented redrive line against the test server. */
async function redrive(line: string, url: string): Promise<void> {
  const cli = /^node dist\/cli\/main\.js (dlq redrive \S+)$/.exec(line);
  if (cli) {
    const run = await runCli([...cli[1]!.split(" "), "--url", url]);
    expect(run.code, run.stderr).toBe(0);
    return;
  }
  const curl = /^curl -s -X (\w+) http:\/\/127\.0\.0\.1:9324(\S+) -H 'content-type: application\/json' -d '([^']*)'$/.exec(line);
  expect(curl, `a redrive line this test can't run: ${line}`).not.toBeNull();
  const res = await fetch(url + curl![2]!, { method: curl![1]!, headers: { "content-type": "application/json" }, body: curl![3]! });
  expect(res.status).toBeLessThan(300);
}

describe("docs/jobs-api.md: redriving a failed job", () => {
  it("documents the CLI and the admin route", () => {
    expect(documentedRedrives().map((l) => l.split(" ")[0])).toEqual(["node", "curl"]);
  });

  it.each(documentedRedrives())("the failed job stays in its queue, its message is in embed-dlq, and `%s` runs it again", async (line) => {
    s = await startJobsServer();
    const { body: submitted } = await s.api("POST", "/v1/queues/embed/jobs", { input: { text: "again" } });
    const id: string = submitted.job.id;
    const [leased] = (await s.api("POST", "/v1/queues/embed/leases", { max: 1 })).body.jobs;
    expect(leased.id).toBe(id);
    await s.api("POST", `/v1/jobs/${id}/fail`, { leaseId: leased.leaseId, error: { message: "bad input" }, retryable: false });

    expect((await s.api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ queue: "embed", status: "failed" });
    expect((await s.api("GET", "/v1/queues/embed/jobs?status=failed")).body.jobs.map((j: { id: string }) => j.id)).toEqual([id]);
    // The dead-letter queue holds the message, not the job.
    expect((await s.api("GET", "/v1/queues/embed-dlq/jobs")).body.jobs).toEqual([]);
    expect((await s.api("GET", "/v1/queues/embed-dlq/messages")).body.messages.map((m: { messageId: string }) => m.messageId)).toEqual([id]);

    await redrive(line, s.url);
    // The move task runs in the background: a lease takes the job once its message is back.
    const again = await waitFor(async () => (await s!.api("POST", "/v1/queues/embed/leases", { max: 1 })).body.jobs[0], {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: "the redriven job to be leased again",
    });
    expect(again).toMatchObject({ id, status: "running", attempt: 1 });
    await s.api("POST", `/v1/jobs/${id}/complete`, { leaseId: again.leaseId, output: { ok: true } });
    expect((await s.api("GET", `/v1/jobs/${id}`)).body.job).toMatchObject({ status: "succeeded", output: { ok: true } });
  });
});
