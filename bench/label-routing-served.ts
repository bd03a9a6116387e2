/**
 * What worker labels cost a lease as a worker sees it: the server (`sluice serve`, SQLite, its
 * defaults) in its own process, workers leasing over HTTP (`POST …/leases`, max 10, each lease
 * carrying the completions of its worker's last one). Two queues of N queued 1 KiB jobs: one whose
 * jobs require nothing, one whose jobs are spread over 10 requirement classes job by job (class i
 * requires {"k<i>":"yes"}). Rows, taking turns in slices of `slice` leases:
 * - plain, 10 workers: no labels, ten workers taking turns on the plain queue;
 * - 10 label sets: ten workers, worker i labelled {"k<i>":"yes"}, on the labelled queue — each
 *   leases only its own class's jobs;
 * - plain, 1 worker / all classes, 1 worker: one worker each, the second labelled with all ten.
 * Prints the median over slices of the server's CPU (all its threads' schedstat) per leased job
 * and each labelled row's ratio to the plain row with as many workers. bench/label-routing.ts
 * measures the store alone, in one process.
 *
 * Usage: npm run bench:labels -- [queued per queue, default 100000] [leased per row, default 20000]
 */
import { fileURLToPath } from "node:url";
import { allClassLabels, classLabels, classes } from "./label-classes.js";
import { startSluiceServer } from "./peers/sluice-server.js";
import { processCpuNanos } from "./procs.js";

const queued = Number(process.argv[2] ?? 100_000);
const leasedPerRow = Number(process.argv[3] ?? 20_000);
const max = 10;
const slice = 50;
const input = "x".repeat(1000);
const repoRoot = fileURLToPath(new URL("..", import.meta.url));

const server = await startSluiceServer({ repoRoot, entry: "dist" });

async function post(path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as unknown;
}

async function fill(queue: string, requires: (n: number) => Record<string, string> | undefined): Promise<void> {
  const perRequest = 100;
  const inFlight = 8;
  for (let n = 0; n < queued; n += perRequest * inFlight) {
    const requests: Promise<unknown>[] = [];
    for (let r = 0; r < inFlight && n + r * perRequest < queued; r++) {
      const first = n + r * perRequest;
      const jobs = Array.from({ length: Math.min(perRequest, queued - first) }, (_, k) => {
        const req = requires(first + k);
        return { input, ...(req ? { requires: req } : {}) };
      });
      requests.push(post(`/v1/queues/${queue}/jobs/batch`, { jobs }));
    }
    await Promise.all(requests);
  }
}

interface LeasedJob {
  id: string;
  leaseId: string;
}
interface Row {
  name: string;
  queue: string;
  /** The labels of the worker making lease `l` (undefined: none); workers are told apart by them. */
  labels: (lease: number) => Record<string, string> | undefined;
  workers: number;
  /** Each worker's completions, sent with its next lease. */
  acks: Map<number, LeasedJob[]>;
  leased: number;
  /** Server CPU µs per leased job, by slice. */
  slices: number[];
}

const row = (name: string, queue: string, workers: number, labels: Row["labels"]): Row => ({ name, queue, workers, labels, acks: new Map(), leased: 0, slices: [] });
const rows: Row[] = [
  row("plain, 10 workers (no labels)", "plain", classes, () => undefined),
  row("10 label sets (worker i: k<i>)", "labelled", classes, (l) => classLabels(l % classes)),
  row("plain, 1 worker (no labels)", "plain", 1, () => undefined),
  row("all classes, 1 worker", "labelled", 1, () => allClassLabels),
];

async function leaseSlice(r: Row, first: number): Promise<void> {
  const before = r.leased;
  const cpu0 = processCpuNanos(server.pid) ?? 0;
  for (let l = first; l < first + slice; l++) {
    const worker = l % r.workers;
    const labels = r.labels(l);
    const complete = (r.acks.get(worker) ?? []).map((j) => ({ id: j.id, leaseId: j.leaseId, output: null }));
    const { jobs } = (await post(`/v1/queues/${r.queue}/leases`, { max, ...(labels ? { labels } : {}), ...(complete.length > 0 ? { complete } : {}) })) as { jobs: LeasedJob[] };
    r.acks.set(worker, jobs);
    r.leased += jobs.length;
  }
  const cpuNs = (processCpuNanos(server.pid) ?? 0) - cpu0;
  r.slices.push(cpuNs / 1000 / (r.leased - before));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

try {
  const t0 = performance.now();
  await fill("plain", () => undefined);
  await fill("labelled", (n) => classLabels(n % classes));
  process.stderr.write(`[label-routing-served] filled 2 × ${queued} jobs in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  for (const r of rows) {
    // Warm-up slices, not counted: the server's code paths compiled, each worker's first acks.
    for (let w = 0; w < 3; w++) await leaseSlice(r, w * slice);
    r.leased = 0;
    r.slices = [];
  }
  for (let l = 3 * slice; rows.some((r) => r.leased < leasedPerRow); l += slice) {
    for (const r of rows) if (r.leased < leasedPerRow) await leaseSlice(r, l);
  }
  const plainWith = (workers: number): number => median(rows.find((r) => r.queue === "plain" && r.workers === workers)!.slices);
  for (const r of rows) {
    const perJob = median(r.slices);
    const ratio = r.queue === "plain" ? "" : `   ×${(perJob / plainWith(r.workers)).toFixed(2)} plain with ${r.workers === 1 ? "1 worker" : `${r.workers} workers`}`;
    console.log(`${r.name.padEnd(34)} ${perJob.toFixed(1).padStart(7)} µs server CPU per leased job (median of ${r.slices.length} slices)${ratio}`);
  }
} finally {
  await server.stop();
}
