/**
 * What a Prometheus scrape of GET /metrics costs with a big backlog: fills one queue with N
 * messages of 1 KiB (default 1,000,000; 1,000 of them in flight), starts the server on that data
 * dir, and times scrapes of /metrics and GET /v1/queues/{queue} (which read depth the same way)
 * beside an SQS GetQueueAttributes of the message counts, which counts the queue's messages
 * exactly. All run on the server's event loop, so their time is also how long every other request
 * waits behind them. The empty queue is measured first, for the baseline.
 *
 * Usage: npm run bench:scrape-cost -- [messages, default 1000000]
 * (docs/operations.md, "What a scrape costs"; run it alone on the machine, like every benchmark)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultQueueConfig } from "../src/core/index.js";
import { openSqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { cleanupNow, removeDir, trackDir } from "./cleanup.js";
import { startChild } from "./procs.js";
import { fillQueue } from "./backlog-fill.js";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const messages = Number(process.argv[2] ?? 1_000_000);
const inFlight = Math.min(1_000, messages);
const body = "x".repeat(1024);
const perSend = 1_000;

function log(line: string): void {
  process.stderr.write(`[scrape-cost] ${line}\n`);
}

/** A data dir whose queue `backlog` holds `n` messages, `inFlight` of them received. */
async function filledDataDir(n: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-scrape-"));
  trackDir(dir);
  const store = openSqliteStore({ filename: join(dir, "sluice.db"), pipelinedSync: true, messageCacheBytes: 0 });
  const nowMs = Date.now();
  const queueId = await fillQueue(store, { name: "backlog", config: defaultQueueConfig(false), n, body, perSend, nowMs, log });
  for (let taken = 0; taken < (n === 0 ? 0 : inFlight); taken += 10) {
    await store.messageReceiveMany({ receives: [{ queueId, max: 10, nowMs, visibleUntilMs: nowMs + 3_600_000, minSentAtMs: 0, receiptToken: `bench-${taken}` }] });
  }
  await store.close();
  return dir;
}

async function timeRequest(url: string, init?: RequestInit): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return performance.now() - t0;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** SQS GetQueueAttributes of the three message counts, over the JSON protocol. */
function countsRequest(base: string): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": "AmazonSQS.GetQueueAttributes" },
    body: JSON.stringify({
      QueueUrl: `${base}/000000000000/backlog`,
      AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"],
    }),
  };
}

interface Timings {
  scrapeMs: number;
  queueInfoMs: number;
  exactCountMs: number;
}

async function measure(n: number): Promise<Timings> {
  const dir = await filledDataDir(n);
  const server = await startChild(process.execPath, ["--import", "tsx", join(repoRoot, "src/cli/main.ts"), "serve", "--port", "0", "--data-dir", dir], /Sluice listening on (http:\/\/[^\s"]+)/, 120_000, {
    cwd: repoRoot,
  });
  const base = server.match[1]!;
  try {
    for (let i = 0; i < 3; i++) await timeRequest(`${base}/metrics`); // warm-up: JIT, page cache
    const scrapes: number[] = [];
    const infos: number[] = [];
    for (let i = 0; i < 15; i++) {
      scrapes.push(await timeRequest(`${base}/metrics`));
      infos.push(await timeRequest(`${base}/v1/queues/backlog`));
    }
    const exact: number[] = [];
    for (let i = 0; i < 3; i++) exact.push(await timeRequest(base, countsRequest(base)));
    return { scrapeMs: median(scrapes), queueInfoMs: median(infos), exactCountMs: median(exact) };
  } finally {
    server.child.kill("SIGTERM");
    await new Promise((r) => server.child.once("exit", r));
    removeDir(dir);
  }
}

const empty = await measure(0);
const full = await measure(messages);
const row = (n: number, t: Timings): string =>
  [String(n).padStart(15), `${t.scrapeMs.toFixed(1)} ms`.padStart(20), `${t.queueInfoMs.toFixed(1)} ms`.padStart(26), `${t.exactCountMs.toFixed(1)} ms`.padStart(30)].join("  ");
console.log(["messages queued", "GET /metrics (med. 15)", "GET /v1/queues/backlog (15)", "GetQueueAttributes, exact (3)"].map((h, i) => h.padStart([15, 20, 26, 30][i]!)).join("  "));
console.log(row(0, empty));
console.log(row(messages, full));
cleanupNow();
