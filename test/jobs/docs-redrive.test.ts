/**
 * docs/jobs-api.md's redrive, as written: a job that failed for good stays `failed` in its queue
 * while its message sits in `<queue>-dlq`; the documented `curl` (replayed with fetch) moves the
 * message back, and the job runs again, its attempts starting over.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { waitFor } from "../support/wait.js";
import { type JobsServer, startJobsServer } from "./http-harness.js";

let s: JobsServer | undefined;
afterEach(async () => {
  await s?.stop();
  s = undefined;
});

/** The one curl in the doc's ```bash blocks that redrives: [method, path, body]. */
function documentedRedrive(): [string, string, string] {
  const doc = readFileSync(join(repoRoot, "docs/jobs-api.md"), "utf8");
  const commands = [...doc.matchAll(/```bash\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split("\n")).filter((l) => l.startsWith("curl") && l.includes("/redrive"));
  expect(commands).toHaveLength(1);
  const m = /^curl -s -X (\w+) http:\/\/127\.0\.0\.1:9324(\S+) -H 'content-type: application\/json' -d '([^']*)'$/.exec(commands[0]!);
  expect(m, commands[0]).not.toBeNull();
  return [m![1]!, m![2]!, m![3]!];
}

describe("docs/jobs-api.md: redriving a failed job", () => {
  it("the failed job stays in its queue; its message is in embed-dlq; the documented curl runs it again", async () => {
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

    const [method, path, body] = documentedRedrive();
    const redrive = await fetch(s.url + path, { method, headers: { "content-type": "application/json" }, body });
    expect(redrive.status).toBeLessThan(300);
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
