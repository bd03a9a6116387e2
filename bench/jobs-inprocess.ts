/**
 * A job's lifecycle in one process, no HTTP: rounds of 32 submits, then one lease that carries
 * the previous round's completions (what the SDK worker sends). Prints CPU per job — the store
 * and core's share of the jobs row, without the server's HTTP and JSON or the SDK.
 *
 * Usage: npx tsx bench/jobs-inprocess.ts [jobs, default 20000]   (INPUT=bytes, default 1000)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openJobsCycle } from "./jobs-cycle.js";

const jobsWanted = Number(process.argv[2] ?? 20_000);
const round = 32;
const dir = mkdtempSync(join(tmpdir(), "sluice-jobs-inprocess-"));
const { store, cycle } = openJobsCycle({ store: { filename: join(dir, "s.db"), pipelinedSync: true }, round, inputBytes: Number(process.env.INPUT ?? 1000) });

let acks = await cycle([]);
for (let i = 0; i < 50; i++) acks = await cycle(acks); // warm-up
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const rounds = Math.ceil(jobsWanted / round);
for (let i = 0; i < rounds; i++) acks = await cycle(acks);
const cpu = process.cpuUsage(cpu0);
const seconds = (performance.now() - t0) / 1000;
const n = rounds * round;
console.log(
  `${n} jobs: ${((cpu.user + cpu.system) / n).toFixed(1)} µs CPU per job (user ${(cpu.user / n).toFixed(1)}, system ${(cpu.system / n).toFixed(1)}), ${(n / seconds).toFixed(0)} jobs/s`,
);
await store.close();
rmSync(dir, { recursive: true, force: true });
