/**
 * Where the jobs row's server CPU goes, by phase: the server child's CPU per job for
 *
 * 1. submits alone (closed-loop clients calling `queue.submit()`, no worker),
 * 2. draining that backlog with one SDK worker (ack-carrying lease requests with full batches),
 * 3. the comparison's own mix (clients calling `queue.run()` while the worker runs),
 *
 * and in (3) the HTTP requests per job by route. (1) + (2) is what a job costs when the server
 * can batch freely; what (3) costs above that is the price of interleaving: small lease batches,
 * held submits, small group commits.
 *
 * Usage: npx tsx bench/jobs-cpu-split.ts [--jobs 20000] [--clients 64] [--concurrency 32]
 */
import { parseArgs } from "node:util";
import { type FetchLike, Sluice } from "../client/src/index.js";
import { leanFetch } from "./lean-fetch.js";
import { startSluiceServer } from "./peers/sluice-server.js";
import { processCpuSeconds } from "./procs.js";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    clients: { type: "string", default: "64" },
    concurrency: { type: "string", default: "32" },
  },
});
const jobs = Number(values.jobs);
const clients = Number(values.clients);
const concurrency = Number(values.concurrency);

const server = await startSluiceServer({ repoRoot: process.cwd(), entry: "src" });
const lean = leanFetch(server.url, clients + 16);
/** Requests per "METHOD /path" (job ids folded), counted only while `counting` is set. */
const requests = new Map<string, number>();
let counting = false;
const countingFetch: FetchLike = (input, init) => {
  if (counting) {
    const route = `${init.method ?? "GET"} ${new URL(input).pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, "{id}")}`;
    requests.set(route, (requests.get(route) ?? 0) + 1);
  }
  return lean.fetch(input, init);
};
const sluice = new Sluice({ url: server.url, attempts: 1, fetch: countingFetch });
const queue = sluice.queue("cpu-split");
const input = "x".repeat(1000);

/** Runs `work` and prints the server's CPU per job and the rate. */
async function phase(name: string, work: () => Promise<void>): Promise<void> {
  const cpuBefore = processCpuSeconds(server.pid);
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = processCpuSeconds(server.pid);
  if (cpuBefore === undefined || cpuAfter === undefined) throw new Error("cannot read the server's CPU time from /proc");
  console.log(`${name.padEnd(34)} ${(((cpuAfter - cpuBefore) * 1e6) / jobs).toFixed(0).padStart(5)} µs/job server CPU · ${(jobs / seconds).toFixed(0)} jobs/s`);
}

/** `clients` loops sharing one counter, each awaiting `one()` until `jobs` calls were made. */
async function closedLoop(one: () => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next++ < jobs) await one();
  }));
}

try {
  // Warm-up: the server's JIT and the SDK's connections, as the comparison's warm-up does.
  const warm = queue.work(async () => ({ ok: true }), { concurrency, waitSeconds: 1 });
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = 0; i < 30; i++) await queue.run(input);
  }));
  await warm.close();

  await phase("1. submits alone", () => closedLoop(() => queue.submit(input)));
  let worker: ReturnType<typeof queue.work> | undefined;
  await phase("2. worker drains the backlog", async () => {
    let done = 0;
    await new Promise<void>((resolve) => {
      worker = queue.work(async () => {
        if (++done === jobs) resolve();
        return { ok: true };
      }, { concurrency, waitSeconds: 1 });
    });
    // The last outcomes ride on one more lease request: let it land inside the measurement.
    await worker?.close();
  });
  const mixed = queue.work(async () => ({ ok: true }), { concurrency, waitSeconds: 1 });
  counting = true;
  await phase("3. run() with the worker running", () => closedLoop(() => queue.run(input)));
  counting = false;
  await mixed.close();
  for (const [route, n] of requests) console.log(`   ${route}: ${(n / jobs).toFixed(3)} requests per job`);
} finally {
  await lean.close();
  await server.stop();
}
