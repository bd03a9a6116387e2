/** Renders results as a terminal table and Markdown, and writes bench/results/. */
import { mkdirSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { cpus, release, totalmem } from "node:os";
import { join } from "node:path";
import type { Comparison, RowResult, Workload } from "./row.js";
import type { BenchReport, ComparisonResult, Ratio } from "./report-types.js";
import { renderChartSvg } from "./chart.js";
import { timeSplitLines } from "./time-split.js";
import { streamCells, streamHeaders, streamLegend } from "./stream-result.js";

export function machineInfo(): BenchReport["machine"] {
  const c = cpus();
  return { cpus: c.length, cpuModel: c[0]?.model ?? "?", totalMemMiB: Math.round(totalmem() / 2 ** 20), kernel: release(), node: process.version };
}

export function gitInfo(repoRoot: string, serverRev?: string): BenchReport["git"] {
  try {
    if (serverRev !== undefined) {
      return { commit: execFileSync("git", ["rev-parse", "--short", `${serverRev}^{commit}`], { cwd: repoRoot, encoding: "utf8" }).trim(), dirty: false };
    }
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" }).trim();
    const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=no", "--", "src"], { cwd: repoRoot, encoding: "utf8" });
    return { commit, dirty: status.trim() !== "" };
  } catch {
    return { commit: "?", dirty: false };
  }
}

export function comparisonResult(c: Comparison, rows: RowResult[], runs: RowResult[]): ComparisonResult {
  const ratios: Ratio[] = [];
  for (const basePeer of [c.baseline, ...(c.alsoAgainst ?? [])]) {
    const base = rows.find((r) => r.peer === basePeer);
    if (base === undefined) continue;
    // A peer with several rows (Sluice on 1 and 2 nodes) is named by its rows' labels.
    const shared = (peer: string): boolean => rows.filter((x) => x.peer === peer).length > 1;
    for (const r of rows) {
      if (r === base || (basePeer !== c.baseline && (r.peer === basePeer || r.peer === c.baseline))) continue;
      const ratio: Ratio = {
        name: `${shared(r.peer) ? r.label : r.peer}/${base.peer}`,
        msgsPerSec: r.saturated.msgsPerSec / base.saturated.msgsPerSec,
        p50: r.saturated.latency.p50Ms / base.saturated.latency.p50Ms,
        p99: r.saturated.latency.p99Ms / base.saturated.latency.p99Ms,
      };
      if (r.paced !== undefined && base.paced !== undefined) {
        ratio.pacedP50 = r.paced.latency.p50Ms / base.paced.latency.p50Ms;
        ratio.pacedP99 = r.paced.latency.p99Ms / base.paced.latency.p99Ms;
      }
      ratios.push(ratio);
    }
  }
  return { id: c.id, title: c.title, baseline: c.baseline, rows, ratios, runs };
}

const int = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? "–" : Math.round(n).toLocaleString("en-US"));
const ms = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? "–" : n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));
const pct = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? "–" : `${Math.round(n)}%`);
const times = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? "–" : `${n.toFixed(2)}×`);

const headers = ["peer", "msgs/s", "p50 ms", "p99 ms", "paced p50", "paced p99", "server CPU", "loadgen CPU", "other CPU", "server µs/msg", "total µs/msg", "lost/dup"];

/** CPU microseconds per message: steadier than msgs/s on a shared box, since waiting for a core costs no CPU. */
function microsPerMsg(corePct: number | undefined, msgsPerSec: number): number | undefined {
  return corePct === undefined ? undefined : ((corePct / 100) * 1e6) / msgsPerSec;
}

function cells(c: ComparisonResult): string[][] {
  const rows = c.rows.map((r) => [
    r.label,
    int(r.saturated.msgsPerSec),
    ms(r.saturated.latency.p50Ms),
    ms(r.saturated.latency.p99Ms),
    ms(r.paced?.latency.p50Ms),
    ms(r.paced?.latency.p99Ms),
    pct(r.cpu.serverCorePct),
    pct(r.cpu.loadGenCorePct),
    pct(r.cpu.otherCorePct),
    int(microsPerMsg(r.cpu.serverCorePct, r.saturated.msgsPerSec)),
    int(microsPerMsg(r.cpu.serverCorePct === undefined ? undefined : r.cpu.serverCorePct + r.cpu.loadGenCorePct, r.saturated.msgsPerSec)),
    `${r.saturated.lost}/${r.saturated.duplicates}`,
  ]);
  for (const q of c.ratios) {
    const [a = "", b = ""] = q.name.split("/");
    rows.push([`ratio ${a} / ${b}`, times(q.msgsPerSec), times(q.p50), times(q.p99), times(q.pacedP50), times(q.pacedP99), "", "", "", "", "", ""]);
  }
  return rows;
}

export function workloadLine(w: Workload): string {
  return `${int(w.messages)} msgs per peer (after ${int(w.warmupMessages)} warm-up) · ${w.bodyBytes} B bodies · batches of ${w.batchSize} · ${w.producers} producers · ${w.consumers} SQS consumers (BullMQ: 1 Worker, concurrency 100) · backlog ≤ ${int(w.backlogMax)} · paced phase ${int(w.pacedMessages)} msgs at ${int(w.pacedRatePerSec)} msgs/s`;
}

/** Other work on the box skews a row; a load average well above the core count says so. */
function loadLine(c: ComparisonResult): string {
  return c.rows.map((r) => `${r.peer} ${r.loadAvg1m === undefined ? "?" : `${r.loadAvg1m.before.toFixed(1)} → ${r.loadAvg1m.after.toFixed(1)}`}`).join(", ");
}

function roundsLine(c: ComparisonResult): string {
  return c.runs
    .map((r) => {
      const rev = r.label.lastIndexOf(" @ ");
      return `${r.peer}${rev === -1 ? "" : `@${r.label.slice(rev + 3)}`} ${int(r.saturated.msgsPerSec)} (${int(microsPerMsg(r.cpu.serverCorePct, r.saturated.msgsPerSec))} µs, ${pct(r.cpu.otherCorePct)})`;
    })
    .join(", ");
}

/** The report's first line: how the CPUs were shared, which decides what the rows can be compared with. */
export function cpuLayoutLine(report: Pick<BenchReport, "pinning" | "machine">): string {
  const p = report.pinning;
  if (p === undefined) return `CPUs: not pinned — servers and the load generator share all ${report.machine.cpus}`;
  return `CPUs: pinned — every server on CPU ${p.serverCpus} (taskset), the load generator on CPU ${p.loadGenCpus}`;
}

const burstHeaders = ["peer", "fill msgs/s", "drain msgs/s", "probe ms fill p50/p99/max", "probe ms idle p50/p99/max", "probe ms drain p50/p99/max", "probe errors", "count ms p50/max", "RSS peak MiB", "disk B/msg", "lost/dup"];

const burstLegend = "fill/drain msgs/s: N ÷ the phase's wall time (fill: acknowledged sends; drain: removed messages). probe: one send → receive → delete on another queue every 100 ms, by the phase it started in; errors are probes that failed or took over 30 s. count: the backlog count (GetQueueAttributes or its like) once a second while idle. RSS: the server's peak. disk: its data directory after the idle spell ÷ N.";

/** The burst comparison's table: rates, the probe in each phase, the backlog count, memory and disk. */
export function burstCells(c: Pick<ComparisonResult, "rows">): string[][] {
  const triple = (p: { p50Ms: number; p99Ms: number; maxMs: number }): string => `${ms(p.p50Ms)} / ${ms(p.p99Ms)} / ${ms(p.maxMs)}`;
  return c.rows.flatMap((r) => {
    const b = r.burst;
    if (b === undefined) return [];
    return [[r.label, int(b.fillMsgsPerSec), int(b.drainMsgsPerSec), triple(b.probe.fill), triple(b.probe.idle), triple(b.probe.drain), int(b.probeErrors), `${ms(b.count.p50Ms)} / ${ms(b.count.maxMs)}`, int(b.rssPeakMiB), int(b.diskBytesPerMessage), `${b.lost}/${b.duplicates}`]];
  });
}

const timeSplitTitle = "Where the time goes — the server's event loop, µs per message by area (self time in a CPU profile of the saturated phase: wall time, so a blocking fsync counts and so does waiting for a busy core; profiling itself costs a little):";

/** Header and rows of the time-split table of a comparison's profiled rows, or undefined without any. */
function timeSplitTable(c: ComparisonResult): string[][] | undefined {
  const profiled = c.rows.filter((r) => r.timeSplit !== undefined);
  if (profiled.length === 0) return undefined;
  const columns = profiled.map((r) => timeSplitLines(r.timeSplit!));
  const header = ["area", ...profiled.map((r) => r.label)];
  return [header, ...(columns[0] ?? []).map(([area], i) => [area, ...columns.map((col) => col[i]?.[1] ?? "–")])];
}

function alignedLines(rows: string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  "));
}

export function renderText(report: BenchReport): string {
  const out: string[] = [cpuLayoutLine(report)];
  for (const c of report.comparisons) {
    out.push("", c.title, c.workloadText ?? workloadLine(report.workload), "");
    const burst = c.rows.some((r) => r.burst !== undefined);
    const stream = c.rows.some((r) => r.stream !== undefined);
    out.push(...alignedLines(burst ? [burstHeaders, ...burstCells(c)] : stream ? [streamHeaders, ...streamCells(c.rows)] : [headers, ...cells(c)]));
    if (burst) out.push("", burstLegend);
    if (stream) out.push("", streamLegend);
    const split = timeSplitTable(c);
    if (split !== undefined) out.push("", timeSplitTitle, ...alignedLines(split));
    out.push("", `load average (1 min) before → after each row: ${loadLine(c)}`);
    if (c.runs.length > c.rows.length) out.push(`all rounds (msgs/s, server µs/msg, other CPU): ${roundsLine(c)}`);
  }
  out.push("", `code: ${report.git.commit}${report.git.dirty ? " + uncommitted changes under src/" : ""}`);
  out.push(`machine: ${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.totalMemMiB} MiB, Linux ${report.machine.kernel}, Node ${report.machine.node}`);
  out.push("msgs/s: first send → last delete/complete. Latency: send → message in a consumer's hands (saturated phase: closed loop; paced: fixed rate, from the scheduled send time). CPU: % of one core during the saturated phase; 'other' is the rest of the machine (noise); µs/msg: CPU per message cycled ('total' adds the load generator, where BullMQ's worker logic runs).");
  return out.join("\n");
}

export function renderMarkdown(report: BenchReport): string {
  const out: string[] = [`${cpuLayoutLine(report)}.`, ""];
  for (const c of report.comparisons) {
    out.push(`**${c.title}** — ${c.workloadText ?? workloadLine(report.workload)}`, "");
    const burst = c.rows.some((r) => r.burst !== undefined);
    const stream = c.rows.some((r) => r.stream !== undefined);
    const head = burst ? burstHeaders : stream ? streamHeaders : headers;
    out.push(`| ${head.join(" | ")} |`, `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`);
    for (const r of burst ? burstCells(c) : stream ? streamCells(c.rows) : cells(c)) out.push(`| ${r.join(" | ")} |`);
    if (stream) out.push("", streamLegend);
    const split = timeSplitTable(c);
    if (split !== undefined) {
      const [head = [], ...body] = split;
      out.push("", timeSplitTitle, "", `| ${head.join(" | ")} |`, `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`, ...body.map((r) => `| ${r.join(" | ")} |`));
    }
    out.push("", `Load average (1 min) before → after each row: ${loadLine(c)}.`);
    if (c.runs.length > c.rows.length) out.push(`Best of ${c.runs.length / Math.max(1, c.rows.length)} rounds per peer; all rounds (msgs/s, server µs/msg, other CPU): ${roundsLine(c)}.`);
    out.push("");
  }
  out.push(`Machine: ${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.totalMemMiB} MiB RAM, Linux ${report.machine.kernel}, Node ${report.machine.node}. Code: ${report.git.commit}${report.git.dirty ? " (+ uncommitted changes under src/)" : ""}. Run started ${report.startedAt}.`);
  return out.join("\n");
}

/** Writes latest.{json,md,svg} and a timestamped JSON copy; returns the paths written. */
export function writeResults(dir: string, report: BenchReport): string[] {
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const stamp = report.startedAt.replace(/[:.]/g, "-");
  const files: Array<[string, string]> = [
    ["latest.json", json],
    [`${stamp}.json`, json],
    ["latest.md", `${renderMarkdown(report)}\n`],
    ["latest.svg", renderChartSvg(report)],
  ];
  const written: string[] = [];
  for (const [name, content] of files) {
    const path = join(dir, name);
    writeFileSync(path, content);
    written.push(path);
  }
  return written;
}
