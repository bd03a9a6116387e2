/**
 * `npm run bench:sdk-workers`: jobs/s of one worker process of each SDK — the TypeScript worker
 * (`sluice worker`) and the Python worker (`python -m sluice_client worker`) — with concurrency 32
 * and a handler that does nothing, draining a queue filled beforehand, against the same server in
 * the same run. Rounds alternate the SDKs (TS, Python, TS, …) so drift on a shared box hits both.
 * Per round: fill a fresh queue, start the worker, let it warm up, then count the jobs the server
 * reports succeeded over a fixed window, and the worker process's CPU meanwhile.
 *
 *   npm run bench:sdk-workers -- [--rounds 3] [--concurrency 32] [--window-seconds 10] [--jobs 60000]
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Sluice } from "../../client/src/index.js";
import { cleanupNow } from "../cleanup.js";
import { machineBusySeconds, waitForQuiet } from "../cpu.js";
import { sleep } from "../phase.js";
import { processCpuSeconds, startChild, stopChild } from "../procs.js";
import { startSluiceServer } from "../peers/sluice-server.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const python = "/usr/bin/python3";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "32" },
    "window-seconds": { type: "string", default: "10" },
    "warmup-seconds": { type: "string", default: "3" },
    "wait-quiet": { type: "string", default: "60" },
    jobs: { type: "string", default: "60000" },
  },
});
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const windowSeconds = Number(values["window-seconds"]);
const warmupSeconds = Number(values["warmup-seconds"]);
const jobsPerRound = Number(values.jobs);
const waitQuietSeconds = Number(values["wait-quiet"]);

type Sdk = "typescript" | "python";

interface Round {
  sdk: Sdk;
  round: number;
  jobsPerSec: number;
  workerCorePct: number;
  workerCpuUsPerJob: number;
  serverCorePct: number;
  /** Everything else on the machine meanwhile (other sessions' work skews a round). */
  otherCorePct: number;
}

function log(line: string): void {
  process.stderr.write(`[bench:sdk-workers] ${line}\n`);
}

function workerCommand(sdk: Sdk, url: string, queue: string): { cmd: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv } {
  const common = ["--queue", queue, "--url", url, "--concurrency", String(concurrency)];
  if (sdk === "typescript") {
    // As the `sluice` bin runs it (its shebang's flag), from the dist/ the server's start just built.
    return { cmd: process.execPath, args: ["--max-semi-space-size=32", join(repoRoot, "dist/cli/main.js"), "worker", join(repoRoot, "bench/sdk-workers/noop.mjs"), ...common], cwd: repoRoot, env: process.env };
  }
  const env = { ...process.env, PYTHONPATH: join(repoRoot, "clients/python/src"), PYTHONDONTWRITEBYTECODE: "1" };
  return { cmd: python, args: ["-m", "sluice_client", "worker", "noop_handler:noop", ...common], cwd: join(repoRoot, "bench/sdk-workers"), env };
}

async function succeeded(url: string, queue: string): Promise<number> {
  const res = await fetch(`${url}/v1/queues/${queue}`);
  return ((await res.json()) as { queue: { stats: { jobs: { succeeded: number } } } }).queue.stats.jobs.succeeded;
}

/** Fills `queue` with `count` jobs, 100 per batch request, 8 requests in flight. */
async function fill(url: string, queue: string, count: number): Promise<void> {
  const q = new Sluice({ url, attempts: 1 }).queue(queue);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const n = Math.min(100, count - next);
      next += n;
      await Promise.all(Array.from({ length: n }, (_, i) => q.submit({ i })));
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
}

async function measure(sdk: Sdk, round: number, url: string, serverPid: number | undefined): Promise<Round> {
  const queue = `sdk-bench-${sdk}-${round}`;
  await fill(url, queue, jobsPerRound);
  // Not while someone else's build runs, if it can be helped (the machine is shared).
  if (waitQuietSeconds > 0) await waitForQuiet(waitQuietSeconds, 15, log);
  const { cmd, args, cwd, env } = workerCommand(sdk, url, queue);
  const { child } = await startChild(cmd, args, /Sluice worker ready/, 60_000, { cwd, env });
  try {
    await sleep(warmupSeconds * 1000);
    const c0 = await succeeded(url, queue);
    const cpu0 = processCpuSeconds(child.pid) ?? 0;
    const server0 = processCpuSeconds(serverPid) ?? 0;
    const machine0 = machineBusySeconds() ?? 0;
    const self0 = process.cpuUsage();
    const t0 = performance.now();
    await sleep(windowSeconds * 1000);
    const c1 = await succeeded(url, queue);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = (processCpuSeconds(child.pid) ?? 0) - cpu0;
    const serverCpu = (processCpuSeconds(serverPid) ?? 0) - server0;
    const machine = (machineBusySeconds() ?? 0) - machine0;
    const self = process.cpuUsage(self0);
    // This process idles through the window, but what it does use is not "other".
    const selfCpu = (self.user + self.system) / 1e6;
    const done = c1 - c0;
    if (c1 >= jobsPerRound) throw new Error(`the ${sdk} worker drained all ${jobsPerRound} jobs before the window ended: give --jobs more`);
    return {
      sdk,
      round,
      jobsPerSec: done / seconds,
      workerCorePct: (cpu / seconds) * 100, workerCpuUsPerJob: (cpu * 1e6) / done,
      serverCorePct: (serverCpu / seconds) * 100,
      otherCorePct: (Math.max(0, machine - cpu - serverCpu - selfCpu) / seconds) * 100,
    };
  } finally {
    await stopChild(child, 60_000);
  }
}

async function main(): Promise<void> {
  const server = await startSluiceServer({ repoRoot, entry: "dist" });
  log(`server pid ${server.pid} at ${server.url}; ${rounds} round(s) of each SDK, concurrency ${concurrency}, ${windowSeconds} s windows`);
  const results: Round[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const sdk of ["typescript", "python"] as const) {
        const r = await measure(sdk, round, server.url, server.pid);
        log(`round ${round} ${sdk}: ${Math.round(r.jobsPerSec)} jobs/s, worker ${Math.round(r.workerCorePct)}% of a core (${Math.round(r.workerCpuUsPerJob)} µs CPU/job), server ${Math.round(r.serverCorePct)}%, other ${Math.round(r.otherCorePct)}%`);
        results.push(r);
      }
    }
  } finally {
    await server.stop();
  }
  const best = (sdk: Sdk): Round => results.filter((r) => r.sdk === sdk).reduce((a, b) => (b.jobsPerSec > a.jobsPerSec ? b : a));
  const ts = best("typescript");
  const py = best("python");
  console.log(`| SDK worker (1 process, concurrency ${concurrency}, no-op handler) | jobs/s (best round) | worker CPU, % of a core | worker µs CPU per job | server CPU, % | other CPU, % |`);
  console.log("| --- | --- | --- | --- | --- | --- |");
  for (const r of [ts, py]) {
    console.log(`| ${r.sdk} | ${Math.round(r.jobsPerSec)} | ${Math.round(r.workerCorePct)} | ${Math.round(r.workerCpuUsPerJob)} | ${Math.round(r.serverCorePct)} | ${Math.round(r.otherCorePct)} |`);
  }
  console.log(`\nPython / TypeScript: ${(py.jobsPerSec / ts.jobsPerSec).toFixed(2)}× the jobs/s, ${(py.workerCpuUsPerJob / ts.workerCpuUsPerJob).toFixed(2)}× the CPU per job`);
  const rounded = results.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "number" ? Math.round(v) : v])));
  console.log(`all rounds: ${JSON.stringify(rounded)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  cleanupNow();
  process.exit(1);
});
