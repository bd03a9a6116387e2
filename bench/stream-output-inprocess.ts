/**
 * Streamed output's server side in one process, no HTTP: `jobs` leased jobs, each with one
 * POST …/output call in flight at a time (what the SDK worker does), `chunks` chunks a call.
 * Prints CPU per output call, commits and syncs, and the longest group-commit transactions —
 * the store and core's share of the stream row, without HTTP, JSON bodies or the SDK.
 *
 * Usage: npx tsx bench/stream-output-inprocess.ts [calls, default 40000] [jobs, default 50] [chunks, default 10]
 * (CHECKPOINT_THREAD=0: SQLite's own checkpoints, in the COMMITs)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { jobServices } from "./jobs-cycle.js";
import { openSqliteStore } from "../src/stores/sqlite/sqlite-store.js";

const calls = Number(process.argv[2] ?? 40_000);
const jobCount = Number(process.argv[3] ?? 50);
const perCall = Number(process.argv[4] ?? 10);
const dir = mkdtempSync(join(tmpdir(), "sluice-stream-inprocess-"));
const commits: number[] = [];
const store = openSqliteStore({
  filename: join(dir, "s.db"),
  pipelinedSync: true,
  checkpointThread: process.env.CHECKPOINT_THREAD !== "0",
  telemetry: { committed: (c) => commits.push(c.seconds * 1000), synced: () => {} },
});
const { jobs } = jobServices(store);

for (let i = 0; i < jobCount; i++) await jobs.submit("", "q", { input: { job: i } });
const leased = await jobs.lease("", "q", { max: jobCount, leaseSeconds: 3600 });
if (leased.length !== jobCount) throw new Error(`leased ${leased.length} of ${jobCount}`);

let seq = 0;
async function worker(id: string, leaseId: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const chunks = Array.from({ length: perCall }, () => [seq++, performance.now()]);
    await jobs.output("", id, { leaseId, chunks });
  }
}
async function run(n: number): Promise<void> {
  await Promise.all(leased.map((j) => worker(j.id, j.leaseToken!, Math.ceil(n / jobCount))));
}

await run(Math.min(5_000, calls / 4)); // warm-up
commits.length = 0;
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await run(calls);
const cpu = process.cpuUsage(cpu0);
loop.disable();
const seconds = (performance.now() - t0) / 1000;
const n = Math.ceil(calls / jobCount) * jobCount;
commits.sort((a, b) => a - b);
const q = (p: number): string => (commits[Math.min(commits.length - 1, Math.floor(commits.length * p))] ?? 0).toFixed(2);
console.log(
  `${n} output calls × ${perCall} chunks, ${jobCount} jobs: ${((cpu.user + cpu.system) / n).toFixed(1)} µs CPU a call (user ${(cpu.user / n).toFixed(1)}, system ${(cpu.system / n).toFixed(1)}), ${(n / seconds).toFixed(0)} calls/s; ` +
    `${commits.length} commits (${(n / commits.length).toFixed(1)} calls each), transaction ms p50 ${q(0.5)} / p99 ${q(0.99)} / max ${q(1)}; event loop delay max ${(loop.max / 1e6).toFixed(1)} ms` +
    (store.checkpointer ? `; ${store.checkpointer.passes} checkpoint passes, ${store.checkpointer.restarts} restarts` : ""),
);
await store.close();
rmSync(dir, { recursive: true, force: true });
