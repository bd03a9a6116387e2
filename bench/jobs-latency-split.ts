/**
 * Where a job's round trip goes: the jobs comparison's shape (a server child process, closed-loop
 * clients calling `queue.run()`, one SDK worker), each finished job's own timestamps splitting
 * the client's wall time into submit → created, queued (created → started), running (started →
 * finished) and finished → result in the client. Timestamps are the server's milliseconds, so
 * the split is in means over many jobs, not per job. The first quarter of jobs is warm-up.
 *
 * Usage: npx tsx bench/jobs-latency-split.ts [--jobs 20000] [--clients 64] [--concurrency 32] [--pause-ms 0]
 * (`--clients 1 --pause-ms 5` is the light-load case.)
 */
import { parseArgs } from "node:util";
import { Sluice } from "../client/src/index.js";
import { leanFetch } from "./lean-fetch.js";
import { startSluiceServer } from "./peers/sluice-server.js";

const { values } = parseArgs({
  options: {
    jobs: { type: "string", default: "20000" },
    clients: { type: "string", default: "64" },
    concurrency: { type: "string", default: "32" },
    "pause-ms": { type: "string", default: "0" },
  },
});
const jobs = Number(values.jobs);
const clients = Number(values.clients);
const pauseMs = Number(values["pause-ms"]);

const server = await startSluiceServer({ repoRoot: process.cwd(), entry: "src" });
const lean = leanFetch(server.url, clients + 8);
const sluice = new Sluice({ url: server.url, attempts: 1, fetch: lean.fetch });
const queue = sluice.queue("latency-split");
const worker = queue.work(async () => ({ ok: true }), { concurrency: Number(values.concurrency), waitSeconds: 1 });
const input = "x".repeat(1000);

/** [total, submit→created, created→started, started→finished, finished→client], ms. */
const samples: number[][] = [];
let next = 0;
const started = performance.now();
try {
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next++ < jobs) {
        const sentWall = Date.now();
        const sent = performance.now();
        const done = await queue.run(input, { timeoutMs: 30_000 });
        const total = performance.now() - sent;
        if (done.status !== "succeeded") throw new Error(`job ${done.id} ended ${done.status}`);
        const created = Date.parse(done.createdAt);
        const startedAt = Date.parse(done.startedAt ?? "");
        const finished = Date.parse(done.finishedAt ?? "");
        samples.push([total, created - sentWall, startedAt - created, finished - startedAt, Date.now() - finished]);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      }
    }),
  );
} finally {
  await worker.close({ timeoutMs: 5_000 });
  await lean.close();
  await server.stop();
}
const seconds = (performance.now() - started) / 1000;
const measured = samples.slice(Math.floor(samples.length / 4));
const mean = (i: number): string => (measured.reduce((sum, s) => sum + s[i]!, 0) / measured.length).toFixed(2);
const totals = measured.map((s) => s[0]!).sort((a, b) => a - b);
const p50 = totals[Math.floor(totals.length / 2)]!.toFixed(2);
console.log(`${(jobs / seconds).toFixed(0)} jobs/s · round trip p50 ${p50} ms, mean ${mean(0)} ms`);
console.log(`mean ms: submit → created ${mean(1)} | queued ${mean(2)} | running ${mean(3)} | finished → client ${mean(4)}`);
