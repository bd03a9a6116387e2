/**
 * The Batch API with a file of N lines (default 50,000, each ~1 KiB of JSON): uploaded with the
 * `openai` client, run as a batch by REST workers that lease 100 jobs at a time and complete them
 * in their next lease, the output file streamed back. The server (this checkout's dist/, built
 * first) runs as its own process, its resident memory sampled every 100 ms: a file held whole
 * anywhere would show as a peak of its size over the idle server's.
 *
 * Usage: npm run build && npm run bench:batch -- [--lines N] [--workers W] [--line-bytes B]
 * (docs/benchmarks.md, "Batch API"; run it alone on the machine, like every benchmark)
 */
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import OpenAI, { toFile } from "openai";
import { cleanupNow, trackDir } from "./cleanup.js";
import { startChild } from "./procs.js";

const { values } = parseArgs({ options: { lines: { type: "string", default: "50000" }, workers: { type: "string", default: "2" }, "line-bytes": { type: "string", default: "1024" } } });
const lines = Number(values.lines);
const workerCount = Number(values.workers);
const repo = fileURLToPath(new URL("..", import.meta.url));

function log(line: string): void {
  process.stderr.write(`[batch-api] ${line}\n`);
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : 0;
}

const dir = mkdtempSync(join(tmpdir(), "sluice-batch-bench-"));
trackDir(dir);
const server = await startChild(process.execPath, [join(repo, "dist/cli/main.js"), "serve", "--port", "0", "--data-dir", dir], /Sluice listening on (http:\/\/[^\s"]+)/, 60_000, { cwd: repo });
const base = server.match[1]!;
const pid = server.child.pid!;
const idleMiB = rssMiB(pid);
let peakMiB = idleMiB;
const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, rssMiB(pid))), 100);
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "loopback", maxRetries: 0, timeout: 600_000 });
// Each line's body padded so the line is about --line-bytes long: run two sizes to tell memory that follows the file from memory that follows the jobs.
const pad = "x".repeat(Math.max(0, Number(values["line-bytes"]) - 124));
const text = Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `req-${i}`, method: "POST", url: "/v1/embeddings", body: { input: `${pad}${i}`, model: "bench" } })).join("\n") + "\n";
const fileMiB = Buffer.byteLength(text) / 1024 / 1024;

let stop = false;
let completedByWorkers = 0;
// GET /healthz back to back all along: an event loop held by the batch's work shows as a slow probe.
const probeMs: number[] = [];
async function probe(): Promise<void> {
  while (!stop) {
    const t = performance.now();
    await (await fetch(`${base}/healthz`)).arrayBuffer();
    probeMs.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
}
async function worker(): Promise<void> {
  let complete: Array<{ id: string; leaseId: string; output: unknown }> = [];
  while (!stop || complete.length > 0) {
    const res = await fetch(`${base}/v1/queues/batch/leases`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ max: stop ? 0 : 100, waitSeconds: stop ? 0 : 1, ...(complete.length > 0 ? { complete } : {}) }),
    });
    if (res.status === 404) {
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, 50)); // the batch's queue is created with its first jobs
      continue;
    }
    const body = (await res.json()) as { jobs: Array<{ id: string; leaseId: string; input: { custom_id: string } }> };
    completedByWorkers += complete.length;
    complete = body.jobs.map((j) => ({ id: j.id, leaseId: j.leaseId, output: { object: "list", data: [{ embedding: [j.input.custom_id.length] }] } }));
  }
}

try {
  const probing = probe();
  const t0 = performance.now();
  const file = await openai.files.create({ file: await toFile(Buffer.from(text), "bench.jsonl"), purpose: "batch" });
  const uploadedMs = performance.now() - t0;
  log(`uploaded ${fileMiB.toFixed(1)} MiB in ${uploadedMs.toFixed(0)} ms`);
  const workers = Array.from({ length: workerCount }, () => worker());
  const t1 = performance.now();
  const batch = await openai.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" });
  let inProgressMs: number | undefined;
  let done = batch;
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    done = await openai.batches.retrieve(batch.id);
    if (inProgressMs === undefined && done.status !== "validating") inProgressMs = performance.now() - t1;
    if (done.status === "completed" || done.status === "failed") break;
  }
  const batchMs = performance.now() - t1;
  stop = true;
  await Promise.all([...workers, probing]);
  if (done.status !== "completed") throw new Error(`batch ${done.status}: ${JSON.stringify(done.errors)}`);
  const t2 = performance.now();
  const content = await openai.files.content(done.output_file_id!);
  let outLines = 0;
  for await (const chunk of content.body as AsyncIterable<Uint8Array>) for (const b of chunk) if (b === 0x0a) outLines++;
  const downloadMs = performance.now() - t2;
  clearInterval(sampler);
  const report = {
    lines,
    fileMiB: Number(fileMiB.toFixed(1)),
    uploadMs: Math.round(uploadedMs),
    validatedMs: Math.round(inProgressMs ?? 0),
    batchMs: Math.round(batchMs),
    linesPerSecond: Math.round(lines / (batchMs / 1000)),
    outputLines: outLines,
    downloadMs: Math.round(downloadMs),
    requestCounts: done.request_counts,
    completedByWorkers,
    healthzMsP99: Number([...probeMs].sort((a, b) => a - b)[Math.floor(0.99 * (probeMs.length - 1))]!.toFixed(1)),
    healthzMsMax: Number(Math.max(...probeMs).toFixed(1)),
    serverRssIdleMiB: Math.round(idleMiB),
    serverRssPeakMiB: Math.round(peakMiB),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  clearInterval(sampler);
  server.child.kill("SIGTERM");
  await new Promise((r) => server.child.once("exit", r));
  cleanupNow();
}
