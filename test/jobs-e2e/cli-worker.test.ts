/**
 * `sluice worker` exits: after a SIGTERM it exits 0 only once the job its last request leased is
 * back in the queue (attempt given back); a queue name the server would refuse is a usage error
 * up front; a server that refuses every lease request stops the worker with exit 1 and the reason.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startJobsServer, type JobsServer } from "../jobs/http-harness.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { within } from "../support/wait.js";
import { fixturesDir, killAllWorkers, spawnCliCommand, spawnWorker } from "./workers.js";

const servers: JobsServer[] = [];
async function server(): Promise<JobsServer> {
  const s = await startJobsServer();
  servers.push(s);
  return s;
}

afterEach(async () => {
  expect(await killAllWorkers(), "worker processes left running").toBe(0);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await removeTempDirs();
});

// Each case starts CLI processes (a TypeScript load each): slow on a busy machine, not wrong.
describe("sluice worker", { timeout: 180_000 }, () => {
  // wire: drain
  it("SIGTERM while an ack request is in flight: exits 0 with the job that request leased released", async () => {
    const srv = await server();
    const a = (await srv.api("POST", "/v1/queues/cli-term/jobs", { input: "A", maxAttempts: 1 })).body.job;
    const b = (await srv.api("POST", "/v1/queues/cli-term/jobs", { input: "B", maxAttempts: 1 })).body.job;
    const w = await spawnWorker({ url: srv.url, module: join(fixturesDir, "sigterm-on-ack.ts"), queue: "cli-term", args: ["--wait-seconds", "1"] });
    const exit = await within(60_000, w.exited, "the worker to exit");
    expect(exit, w.stderr()).toEqual({ code: 0, signal: null });
    expect((await srv.api("GET", `/v1/jobs/${a.id}`)).body.job.status).toBe("succeeded");
    // Checked right at exit: the release was confirmed before the process went.
    expect((await srv.api("GET", `/v1/jobs/${b.id}`)).body.job).toMatchObject({ status: "queued", attempt: 0, error: null });
    expect(w.stderr()).toContain('"released":1');
  });

  it("refuses a queue name the server would refuse, before starting (exit 2)", async () => {
    const srv = await server();
    const env = { SLUICE_TEST_LOG: join(srv.dataDir, "unused.log") };
    const bad = spawnCliCommand(["worker", join(fixturesDir, "record.ts"), "--queue", "bad name!", "--url", srv.url], env);
    expect(await within(60_000, bad.exited, "the worker to refuse its flags")).toEqual({ code: 2, signal: null });
    expect(bad.stderr()).toContain('--queue must be 1–80 characters of A–Z, a–z, 0–9, _ and -, got "bad name!"');
    expect(bad.stdout()).not.toContain("ready");
    const long = spawnCliCommand(["worker", join(fixturesDir, "record.ts"), "--queue", "q".repeat(81), "--url", srv.url], env);
    expect((await within(60_000, long.exited, "the worker to refuse its flags")).code).toBe(2);
  });

  it("a handler module that can't be loaded: missing is a usage error (exit 2); one that throws, or has a syntax error in a file it imports, names the module and where (exit 1)", async () => {
    const srv = await server();
    const dir = await makeTempDir("sluice-bad-handler-");
    await writeFile(join(dir, "throws.mjs"), 'throw new Error("no model weights at /models/x");\n');
    await writeFile(join(dir, "imports-broken.mjs"), 'import "./broken.mjs";\nexport default async () => null;\n');
    await writeFile(join(dir, "broken.mjs"), "export default async (job) => {\n  return { ok: true\n};\n");
    const run = async (module: string): Promise<{ code: number | null; stderr: string }> => {
      const p = spawnCliCommand(["worker", module, "--queue", "cli-bad-module", "--url", srv.url]);
      const { code } = await within(60_000, p.exited, "the worker to refuse its module");
      expect(p.stdout()).not.toContain("ready");
      return { code, stderr: p.stderr() };
    };

    const missing = await run(join(dir, "nope.mjs"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`sluice: handler module ${join(dir, "nope.mjs")} not found (no file ${join(dir, "nope.mjs")})\n`);

    const throws = await run(join(dir, "throws.mjs"));
    expect(throws.code).toBe(1);
    expect(throws.stderr).toContain(`sluice worker: cannot load the handler module ${join(dir, "throws.mjs")}: importing it threw:`);
    expect(throws.stderr).toContain("no model weights at /models/x");

    // The syntax error is in a file the module imports: the report must name that file and line.
    const broken = await run(join(dir, "imports-broken.mjs"));
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`sluice worker: cannot load the handler module ${join(dir, "imports-broken.mjs")}: it has a syntax error`);
    expect(broken.stderr).toContain(`${pathToFileURL(join(dir, "broken.mjs")).href}:`);
    expect(broken.stderr).toContain("SyntaxError");
  });

  it("stops with exit 1 and the server's error when every lease request is refused (not retried forever)", async () => {
    const srv = await server();
    // A URL that reaches a server but not the jobs API: every lease is a 404 that no retry can fix.
    const w = await spawnWorker({ url: `${srv.url}/not-sluice`, module: join(fixturesDir, "record.ts"), queue: "cli-refused", env: { SLUICE_TEST_LOG: join(srv.dataDir, "unused.log") } });
    const exit = await within(60_000, w.exited, "the worker to stop on its own");
    expect(exit).toEqual({ code: 1, signal: null });
    expect(w.stderr()).toContain("sluice worker: stopped: the server refuses its lease requests");
    expect(w.stderr()).toContain("RouteNotFound (HTTP 404)");
  });
});
