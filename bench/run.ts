/**
 * `npm run bench`: runs every comparison's rows one after the other (never concurrently) in this
 * one process tree, prints a table, and writes bench/results/. See docs/benchmarks.md.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseBenchArgs, usage } from "./args.js";
import { cleanupNow, trackDir } from "./cleanup.js";
import { waitForQuiet } from "./cpu.js";
import { comparisons } from "./comparisons.js";
import { pinLoadGenerator, setPinning } from "./pinning.js";
import { comparisonResult, gitInfo, machineInfo, renderText, writeResults } from "./report.js";
import type { BenchReport, ComparisonResult } from "./report-types.js";
import type { Row, RowContext, RowResult } from "./row.js";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
/** "Quiet": the rest of the machine uses less than this much of one core. */
const quietBusyPct = 15;

function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}

async function main(): Promise<number> {
  const args = parseBenchArgs(process.argv.slice(2));
  if (args === "help") {
    console.log(usage);
    return 0;
  }
  setPinning(args.pinning);
  if (args.pinning !== undefined) {
    await pinLoadGenerator();
    log(`pinned: servers on CPU ${args.pinning.serverCpus}, load generator on CPU ${args.pinning.loadGenCpus}`);
  }
  const startedAt = new Date().toISOString();
  const ctx: RowContext = { repoRoot, workload: args.workload, log, serverEntry: args.serverEntry, pgStats: args.pgStats };
  if (args.pgPoolSize !== undefined) ctx.pgPoolSize = args.pgPoolSize;
  if (args.pgUnixSocket) ctx.pgUnixSocket = true;
  if (args.serverRev !== undefined) ctx.serverRev = args.serverRev;
  if (args.serverDir !== undefined) ctx.serverDir = resolve(args.serverDir);
  if (args.cpuProfDir !== undefined) {
    ctx.cpuProfDir = resolve(args.cpuProfDir);
    mkdirSync(ctx.cpuProfDir, { recursive: true });
  }
  if (args.timeSplit) {
    ctx.timeSplit = true;
    if (ctx.cpuProfDir === undefined) {
      ctx.cpuProfDir = mkdtempSync(join(tmpdir(), "sluice-bench-prof-"));
      trackDir(ctx.cpuProfDir);
    }
  }
  const results: ComparisonResult[] = [];
  let failures = 0;
  for (const c of comparisons) {
    if (args.compare !== undefined ? !args.compare.includes(c.id) : c.onlyWhenNamed === true) continue;
    const runs: RowResult[] = [];
    const rows = args.baselineRev === undefined ? c.rows : withBaselineRows(c.rows, args.baselineRev);
    // Rounds alternate the peers (A B A B …), so slow drift on a shared box hits both alike.
    for (let round = 1; round <= args.repeat; round++) {
      for (const row of rows) {
        if (args.only !== undefined && row.peer !== args.only) continue;
        log(`── ${c.id}: ${row.label}${args.repeat > 1 ? ` (round ${round} of ${args.repeat})` : ""}`);
        try {
          if (args.waitQuietS > 0) await waitForQuiet(args.waitQuietS, quietBusyPct, log);
          const loadBefore = loadavg()[0] ?? 0;
          const r = await row.run(ctx);
          r.loadAvg1m = { before: loadBefore, after: loadavg()[0] ?? 0 };
          r.round = round;
          log(`${row.peer}: ${Math.round(r.saturated.msgsPerSec)} msgs/s, p50 ${r.saturated.latency.p50Ms.toFixed(1)} ms, p99 ${r.saturated.latency.p99Ms.toFixed(1)} ms, other CPU ${Math.round(r.cpu.otherCorePct ?? 0)}%`);
          if (r.saturated.lost > 0 || r.saturated.duplicates > 0) log(`${row.peer}: WARNING lost ${r.saturated.lost}, duplicates ${r.saturated.duplicates}`);
          runs.push(r);
        } catch (err) {
          failures++;
          log(`${row.peer} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        }
      }
    }
    if (runs.length > 0) {
      const result = comparisonResult(c, bestPerPeer(runs), runs);
      if (c.describeWorkload) result.workloadText = c.describeWorkload(args.workload);
      results.push(result);
    }
  }
  const report: BenchReport = { schema: 1, startedAt, finishedAt: new Date().toISOString(), machine: machineInfo(), git: gitInfo(repoRoot, args.serverRev), workload: args.workload, comparisons: results };
  if (args.pinning !== undefined) report.pinning = args.pinning;
  console.log(renderText(report));
  if (args.write && results.length > 0) {
    const written = writeResults(join(repoRoot, "bench/results"), report);
    log(`wrote ${written.map((p) => p.slice(repoRoot.length)).join(", ")}`);
  }
  return failures === 0 ? 0 : 1;
}

/**
 * --baseline-rev: each Sluice row preceded by the same row run on a clean snapshot of `rev`, its
 * label marked with the revision — the comparison's baseline then, so its ratios read after/before.
 */
function withBaselineRows(rows: readonly Row[], rev: string): Row[] {
  return rows.flatMap((row): Row[] => {
    if (row.peer !== "sluice") return [row];
    const label = `${row.label} @ ${rev}`;
    const before: Row = {
      peer: row.peer,
      label,
      async run(ctx: RowContext): Promise<RowResult> {
        const result = await row.run({ ...ctx, serverRev: rev, serverDir: undefined });
        return { ...result, label };
      },
    };
    return [before, row];
  });
}

/** Best of N per row: the highest-throughput round, i.e. the one least disturbed by the rest of the box. */
function bestPerPeer(runs: RowResult[]): RowResult[] {
  const best = new Map<string, RowResult>();
  for (const r of runs) {
    const cur = best.get(r.label);
    if (cur === undefined || r.saturated.msgsPerSec > cur.saturated.msgsPerSec) best.set(r.label, r);
  }
  return [...best.values()];
}

main()
  .then((code) => {
    cleanupNow();
    process.exit(code);
  })
  .catch((err: unknown) => {
    log(`fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    cleanupNow();
    process.exit(1);
  });
