/**
 * What worker labels cost a lease, in one process (no HTTP): a queue of N jobs that require
 * nothing, and one of N jobs spread over 10 requirement classes (class i requires {"k<i>":"yes"}).
 * Workers lease 10 at a time, each lease carrying the completions of its worker's last one, the
 * rows taking turns in slices of 50 leases:
 * - plain: no labels, on the plain queue (the unlabelled hot path);
 * - labels, plain queue: a labelled worker on a queue without classes (what labels alone cost);
 * - plain, 10 workers: no labels, ten workers taking turns, as the one-class row's ten do (what
 *   completing jobs ten leases back costs, labels aside);
 * - one class: labels {"k<i>":"yes"} (i round robin: 10 workers), on the labelled queue;
 * - all classes: labels with all 10 pairs, on the labelled queue (a 10-way merge of index heads);
 * - one class, in runs: as one class, on a queue whose jobs came in runs of 1,000 of one class, so
 *   that a class's jobs sit together in the table (what the routing costs, without the spread).
 * Prints each row's median over its slices of process CPU µs per leased job (the machine's other
 * load moves single slices a lot), and the ratio to plain.
 *
 * In the labelled queue one job in ten is of a given class, so the 10 jobs a one-class lease takes
 * (and later completes) lie on ~10 table pages where a plain lease's lie on ~2: the difference
 * between the "one class" rows is that spread, not the routing.
 *
 * Usage: npx tsx bench/label-routing.ts [queued per queue, default 100000] [leased per row, default 20000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jobServices } from "./jobs-cycle.js";
import { allClassLabels, classLabels, classes, fillQueue } from "./label-classes.js";
import { openSqliteStore } from "../src/stores/sqlite/sqlite-store.js";

const queued = Number(process.argv[2] ?? 100_000);
const leasedPerRow = Number(process.argv[3] ?? 20_000);
const max = 10;
const slice = 50;
/** The third queue's jobs come in runs of this many of one class (a class's jobs then sit together). */
const runLength = 1_000;
const dir = mkdtempSync(join(tmpdir(), "sluice-label-routing-"));
const store = openSqliteStore({ filename: join(dir, "s.db"), pipelinedSync: true });
const { jobs } = jobServices(store);
const input = "x".repeat(1000);
const fill = (queue: string, requires: (n: number) => Record<string, string> | undefined): Promise<void> => fillQueue(jobs, queue, queued, input, requires);

type Ack = { kind: "complete"; id: string; leaseId: string; output: unknown };
interface Row {
  name: string;
  queue: string;
  labels: (lease: number) => Record<string, string> | undefined;
  /** The acks each worker (by its labels) carries on its next lease. */
  acks: Map<string, Ack[]>;
  leased: number;
  /** CPU µs per leased job of each slice. */
  slices: number[];
}

const row = (name: string, queue: string, labels: Row["labels"]): Row => ({ name, queue, labels, acks: new Map(), leased: 0, slices: [] });
const rows: Row[] = [
  row("plain (no labels, plain queue)", "plain", () => undefined),
  row("labels, plain queue (no classes)", "plain", (l) => classLabels(l % classes)),
  row("plain, 10 workers taking turns (no labels)", "plain", () => undefined),
  row("one class (labels match 1 of 10 classes)", "labelled", (l) => classLabels(l % classes)),
  row("all classes (labels match all 10)", "labelled", () => allClassLabels),
  row("one class, classes in runs of 1,000", "runs", (l) => classLabels(Math.floor(l / (runLength / max)) % classes)),
];

async function leaseSlice(r: Row, first: number): Promise<void> {
  const before = r.leased;
  const cpu0 = process.cpuUsage();
  for (let l = first; l < first + slice; l++) {
    const labels = r.labels(l);
    // Each worker completes its own last lease: ten workers complete jobs ten leases back.
    const worker = labels !== undefined ? Object.keys(labels).join() : r.name.includes("10 workers") ? String(l % classes) : "";
    const { leased } = await jobs.leaseWithAcks("", r.queue, { max, ...(labels ? { labels } : {}) }, r.acks.get(worker) ?? []);
    r.acks.set(worker, leased.map((j) => ({ kind: "complete", id: j.id, leaseId: j.leaseToken, output: null })));
    r.leased += leased.length;
  }
  const cpu = process.cpuUsage(cpu0);
  r.slices.push((cpu.user + cpu.system) / (r.leased - before));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const t0 = performance.now();
await fill("plain", () => undefined);
await fill("labelled", (n) => classLabels(n % classes));
await fill("runs", (n) => classLabels(Math.floor(n / runLength) % classes));
process.stderr.write(`[label-routing] filled 3 × ${queued} jobs in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
for (const r of rows) {
  await leaseSlice(r, 0); // warm-up, not counted
  r.leased = 0;
  r.slices = [];
}
for (let l = slice; rows.some((r) => r.leased < leasedPerRow); l += slice) {
  for (const r of rows) if (r.leased < leasedPerRow) await leaseSlice(r, l);
}
const base = median(rows[0]!.slices);
// The one-class rows' ten workers each complete jobs ten leases back: against the plain row whose
// ten workers do the same, their ratio is what the labels cost.
const tenWorkers = median(rows[2]!.slices);
for (const r of rows) {
  const perJob = median(r.slices);
  const againstTen = r.name.startsWith("one class") ? `   ×${(perJob / tenWorkers).toFixed(2)} plain with 10 workers` : "";
  console.log(`${r.name.padEnd(42)} ${perJob.toFixed(1).padStart(7)} µs CPU per leased job (median of ${r.slices.length} slices)   ×${(perJob / base).toFixed(2)}${againstTen}`);
}
await store.close();
rmSync(dir, { recursive: true, force: true });
