/**
 * `sluice jobs submit|get|wait|cancel|list` and `sluice worker` with a batch module, as processes
 * against a real in-process server.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type Job, NonRetryableError, Sluice } from "../../client/src/index.js";
import { type TestServer, startTestServer, stopAllServers } from "../support/server.js";
import { removeTempDirs } from "../support/tmp.js";
import { killAllWorkers, runCli, spawnWorker } from "./workers.js";

let server: TestServer | undefined;
async function theServer(): Promise<TestServer> {
  server ??= await startTestServer();
  return server;
}

afterEach(async () => {
  expect(await killAllWorkers(), "worker processes left running").toBe(0);
});
afterAll(async () => {
  await stopAllServers();
  await removeTempDirs();
});

// Each case starts CLI processes (a TypeScript load each): slow on a busy machine, not wrong.
describe("sluice jobs", { timeout: 180_000 }, () => {
  it("submit prints the queued job; get and cancel print it again; list finds it", async () => {
    const { url } = await theServer();
    const submitted = await runCli(["jobs", "submit", "cli-q", '{"prompt":"hi"}', "--priority", "7", "--idempotency-key", "cli-key", "--url", url]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const job = JSON.parse(submitted.stdout) as Job;
    expect(job).toMatchObject({ status: "queued", queue: "cli-q", input: { prompt: "hi" }, priority: 7, idempotencyKey: "cli-key" });

    const got = await runCli(["jobs", "get", job.id, "--url", url]);
    expect(JSON.parse(got.stdout)).toMatchObject({ id: job.id, status: "queued" });

    const listed = await runCli(["jobs", "list", "cli-q", "--status", "queued", "--url", url]);
    expect((JSON.parse(listed.stdout) as { jobs: Job[] }).jobs.map((j) => j.id)).toContain(job.id);

    const canceled = await runCli(["jobs", "cancel", job.id, "--url", url]);
    expect(JSON.parse(canceled.stdout)).toMatchObject({ id: job.id, status: "canceled" });
  });

  it("errors: a coded API error exits 1, bad usage exits 2", async () => {
    const { url } = await theServer();
    const missing = await runCli(["jobs", "get", "00000000-0000-4000-8000-000000000000", "--url", url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("JobNotFound");
    const badJson = await runCli(["jobs", "submit", "cli-q", "{nope", "--url", url]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain("not valid JSON");
    const unreachable = await runCli(["jobs", "get", "x", "--url", "http://127.0.0.1:1"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("cannot reach the server");
  });

  it("bad usage found by the argument parser exits 2 as well (an unknown option, a missing or extra argument, an unknown command); --help exits 0", async () => {
    const { url } = await theServer();
    const cases: [string[], string][] = [
      [["jobs", "submit", "cli-q", "{}", "--priorty", "5", "--url", url], "error: unknown option '--priorty'"],
      [["jobs", "submit", "cli-q", "--url", url], "error: missing required argument 'json'"],
      // An unquoted JSON input, split by the shell.
      [["jobs", "submit", "cli-q", "{text:", "hi}", "--url", url], "error: too many arguments for 'submit'"],
      [["worker", "test/jobs-e2e/fixtures/record.ts", "--url", url], "error: required option '--queue <name>' not specified"],
      [["job", "get", "x"], "error: unknown command 'job'"],
      [["jobs"], "Usage: sluice jobs"],
    ];
    for (const [args, message] of cases) {
      const res = await runCli(args);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr).toContain(message);
    }
    expect((await runCli(["jobs", "submit", "--help"])).code).toBe(0);
    expect((await runCli(["--version"])).code).toBe(0);
  });

  it("integer flags take decimal digits only: an empty value (an unset shell variable), hex or an exponent is a usage error, and nothing is submitted", async () => {
    const { url } = await theServer();
    for (const [flag, value] of [["--priority", ""], ["--priority", "0x5"], ["--priority", " 5"], ["--max-attempts", "1e1"], ["--delay-seconds", "5.0"]] as const) {
      const res = await runCli(["jobs", "submit", "cli-int", "{}", flag, value, "--url", url]);
      expect(res.code, `${flag} ${JSON.stringify(value)}`).toBe(2);
      expect(res.stderr).toContain(`sluice: ${flag} must be an integer in`);
      expect(res.stderr).toContain(`got ${JSON.stringify(value)}`);
    }
    const worker = await runCli(["worker", "test/jobs-e2e/fixtures/record.ts", "--queue", "cli-int", "--drain-timeout-ms", "", "--url", url], 30_000, { SLUICE_TEST_LOG: "/dev/null" });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('sluice: --drain-timeout-ms must be an integer in 0–2147483647, got ""');
    const listed = await runCli(["jobs", "list", "cli-int", "--url", url]);
    expect(listed.stderr).toContain("QueueNotFound"); // never created: no submit went out
  });

  it("submit: a bad --timeout-ms, or one without --wait, is a usage error and submits nothing", async () => {
    const { url } = await theServer();
    const bad = await runCli(["jobs", "submit", "cli-tmo", "{}", "--wait", "--timeout-ms", "soon", "--url", url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('sluice: --timeout-ms must be an integer in 0–2147483647, got "soon"');
    const listed = await runCli(["jobs", "list", "cli-tmo", "--url", url]);
    expect(listed.stderr).toContain("QueueNotFound"); // never created: no submit went out
    const noWait = await runCli(["jobs", "submit", "cli-tmo-2", "{}", "--timeout-ms", "1000", "--url", url]);
    expect(noWait.code).toBe(2);
    expect(noWait.stderr).toContain("sluice: --timeout-ms needs --wait");
    expect((await runCli(["jobs", "list", "cli-tmo-2", "--url", url])).stderr).toContain("QueueNotFound");
  });

  it("a bad --url or SLUICE_URL is a usage error naming it (exit 2, no stack trace), before a worker imports its module", async () => {
    const noScheme = await runCli(["jobs", "get", "x", "--url", "127.0.0.1:9324"]);
    expect(noScheme.code).toBe(2);
    expect(noScheme.stderr).toBe('sluice: --url must be an http:// or https:// URL such as http://127.0.0.1:9324, got "127.0.0.1:9324"\n');
    const fromEnv = await runCli(["jobs", "submit", "cli-q", "{}"], 30_000, { SLUICE_URL: "localhost:9324" });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('sluice: SLUICE_URL must be an http:// or https:// URL such as http://127.0.0.1:9324, got "localhost:9324"');
    // record.ts throws at import without SLUICE_TEST_LOG: the URL must be refused before that.
    const worker = await runCli(["worker", "test/jobs-e2e/fixtures/record.ts", "--queue", "cli-url", "--url", "ftp://127.0.0.1:9324"], 30_000, { SLUICE_TEST_LOG: "" });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('sluice: --url must be an http:// or https:// URL such as http://127.0.0.1:9324, got "ftp://127.0.0.1:9324"');
    // An empty SLUICE_URL counts as unset (as the server's SLUICE_* variables do); --url wins anyway.
    const { url } = await theServer();
    const emptyEnv = await runCli(["jobs", "get", "00000000-0000-4000-8000-000000000000", "--url", url], 30_000, { SLUICE_URL: "" });
    expect(emptyEnv.stderr).toContain("JobNotFound");
  });

  it("submit --wait prints the finished job", async () => {
    const { url } = await theServer();
    const worker = new Sluice({ url }).queue("cli-wait").work(async (job) => ({ echo: job.input }));
    try {
      const res = await runCli(["jobs", "submit", "cli-wait", '{"x":1}', "--wait", "--timeout-ms", "20000", "--url", url]);
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ status: "succeeded", output: { echo: { x: 1 } } });
    } finally {
      await worker.close();
    }
  });

  it("submit --wait and wait exit 3 when the job ended failed or canceled, still printing it, so `&&` stops; 0 only when it succeeded", async () => {
    const { url } = await theServer();
    const sluice = new Sluice({ url });
    const worker = sluice.queue("cli-fail").work(async (job) => {
      if ((job.input as { ok?: boolean }).ok) return "fine";
      throw new NonRetryableError("model exploded");
    });
    try {
      const failed = await runCli(["jobs", "submit", "cli-fail", '{"ok":false}', "--wait", "--timeout-ms", "20000", "--url", url]);
      expect(failed.code, failed.stderr).toBe(3);
      const failedJob = JSON.parse(failed.stdout) as Job;
      expect(failedJob).toMatchObject({ status: "failed", error: { message: "model exploded" } });
      expect(failed.stderr).toContain(`sluice: job ${failedJob.id} ended failed`);

      const waited = await runCli(["jobs", "wait", failedJob.id, "--url", url]);
      expect(waited.code, waited.stderr).toBe(3);
      expect(JSON.parse(waited.stdout)).toMatchObject({ id: failedJob.id, status: "failed" });

      const ok = await runCli(["jobs", "submit", "cli-fail", '{"ok":true}', "--wait", "--timeout-ms", "20000", "--url", url]);
      expect(ok.code, ok.stderr).toBe(0);
      const okJob = JSON.parse(ok.stdout) as Job;
      expect(okJob).toMatchObject({ status: "succeeded", output: "fine" });
      expect((await runCli(["jobs", "wait", okJob.id, "--url", url])).code).toBe(0);
    } finally {
      await worker.close();
    }

    // Nobody works this queue: the job is canceled while queued, and waiting for it says so.
    const queued = await sluice.queue("cli-cancel").submit({});
    await sluice.jobs.cancel(queued.id);
    const canceled = await runCli(["jobs", "wait", queued.id, "--url", url]);
    expect(canceled.code, canceled.stderr).toBe(3);
    expect(JSON.parse(canceled.stdout)).toMatchObject({ id: queued.id, status: "canceled" });
    expect(canceled.stderr).toContain(`sluice: job ${queued.id} ended canceled`);

    // A timeout is still an error (1), not a finished job: the last state is printed.
    const pending = await sluice.queue("cli-cancel").submit({});
    const timedOut = await runCli(["jobs", "wait", pending.id, "--timeout-ms", "0", "--url", url]);
    expect(timedOut.code, timedOut.stderr).toBe(1);
    expect(JSON.parse(timedOut.stdout)).toMatchObject({ id: pending.id, status: "queued" });
  });

  it("--help documents the exit statuses", async () => {
    for (const args of [["jobs", "--help"], ["jobs", "submit", "--help"], ["jobs", "wait", "--help"]]) {
      const help = await runCli(args);
      expect(help.code).toBe(0);
      expect(help.stdout, args.join(" ")).toMatch(/Exit status:\n {2}0 {2}success[\s\S]*\n {2}1 {2}an error[\s\S]*\n {2}2 {2}bad usage\n {2}3 {2}with --wait \/ jobs wait: the job ended failed or canceled/);
    }
    expect((await runCli(["--help"])).stdout).toContain("`jobs submit --wait` and `jobs wait` exit 3");
  });
});

// Each case starts CLI processes (a TypeScript load each): slow on a busy machine, not wrong.
describe("sluice worker", { timeout: 180_000 }, () => {
  it("runs a batch module: items fail one by one, the rest succeed; SIGTERM drains and exits 0", async () => {
    const { url } = await theServer();
    const sluice = new Sluice({ url });
    const q = sluice.queue("cli-batch");
    const texts = ["Wonderful, I love it!", "", "Terrible and broken.", "It costs $5.", "Great support team."];
    const handles = await Promise.all(texts.map((text) => q.submit({ text })));
    const worker = await spawnWorker({ url, module: "examples/sentiment/batch-worker.js", queue: "cli-batch", args: ["--batch-size", "4", "--batch-window-ms", "50"] });
    expect(worker.stdout()).toContain("batches of ≤ 4 within 50 ms");
    const done = await Promise.all(handles.map((h) => h.wait({ timeoutMs: 30_000 })));
    expect(done.map((j) => j.status)).toEqual(["succeeded", "failed", "succeeded", "succeeded", "succeeded"]);
    expect(done[1]).toMatchObject({ attempt: 1, error: { type: "BatchItemError" } });
    expect((done[0]!.output as { label: string }).label).toBe("positive");
    expect((done[2]!.output as { label: string }).label).toBe("negative");
    expect(done[3]!.output).toMatchObject({ entities: [{ text: "$5", type: "MONEY" }] });

    worker.child.kill("SIGTERM");
    const exit = await worker.exited;
    expect(exit.code, worker.stderr()).toBe(0);
    expect(worker.stderr()).toContain("drained");
  });

  it("refuses a module without a handler (exit 2)", async () => {
    const { url } = await theServer();
    const res = await runCli(["worker", "test/jobs-e2e/fixtures/no-handler.ts", "--queue", "x", "--url", url]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("must default-export a handler");
  });
});
