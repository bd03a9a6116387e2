/**
 * How a server behaves idle with a deep backlog: fills one queue with N messages of 1 KiB
 * (default 1,000,000, none past retention) through the store of the Sluice checkout given, starts
 * that checkout's server on the data dir, then for a while probes GET /healthz back to back
 * (every answer's latency: a stall of the event loop shows as one slow probe) and times
 * GetQueueAttributes of the message counts. Reports disk bytes per message too.
 *
 * Usage: npm run bench:deep-backlog -- [--messages N] [--seconds S] [--repo DIR]
 * DIR: a checkout of another revision (a `git worktree add` with node_modules), for a before/after.
 * (docs/operations.md, "A deep backlog"; run it alone on the machine, like every benchmark)
 */
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { cleanupNow, removeDir, trackDir } from "./cleanup.js";
import { startChild } from "./procs.js";
import { type FillStore, fillQueue } from "./backlog-fill.js";

const { values } = parseArgs({ options: { messages: { type: "string", default: "1000000" }, seconds: { type: "string", default: "30" }, repo: { type: "string" } } });
const repo = values.repo ? resolve(values.repo) : fileURLToPath(new URL("..", import.meta.url));
const messages = Number(values.messages);
const probeSeconds = Number(values.seconds);
const body = "x".repeat(1024);
const perSend = 1_000;

function log(line: string): void {
  process.stderr.write(`[deep-backlog] ${line}\n`);
}


/** A data dir whose queue `backlog` holds `n` messages, written by `repo`'s own store (its schema). */
async function filledDataDir(n: number): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-deep-"));
  trackDir(dir);
  const { openSqliteStore } = (await import(join(repo, "src/stores/sqlite/sqlite-store.ts"))) as { openSqliteStore: (o: object) => FillStore & { close(): Promise<void> } };
  const { defaultQueueConfig } = (await import(join(repo, "src/core/index.ts"))) as { defaultQueueConfig: (fifo: boolean) => unknown };
  const store = openSqliteStore({ filename: join(dir, "sluice.db"), pipelinedSync: true, messageCacheBytes: 0 });
  const nowMs = Date.now();
  await fillQueue(store, { name: "backlog", config: defaultQueueConfig(false), n, body, perSend, nowMs, log });
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

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

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

const t0 = performance.now();
const dir = await filledDataDir(messages);
log(`filled in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
const server = await startChild(process.execPath, ["--import", "tsx", join(repo, "src/cli/main.ts"), "serve", "--port", "0", "--data-dir", dir], /Sluice listening on (http:\/\/[^\s"]+)/, 600_000, { cwd: repo });
const base = server.match[1]!;
try {
  const probes: number[] = [];
  const counts: number[] = [];
  const end = performance.now() + probeSeconds * 1000;
  let next = performance.now();
  while (performance.now() < end) {
    probes.push(await timeRequest(`${base}/healthz`));
    // Every 2 s of probing, one count.
    if (performance.now() >= next) {
      counts.push(await timeRequest(base, countsRequest(base)));
      next += 2_000;
    }
  }
  const db = join(dir, "sluice.db");
  const bytes = statSync(db).size + (statSync(`${db}-wal`, { throwIfNoEntry: false })?.size ?? 0);
  const ms = (x: number): string => `${x.toFixed(1)} ms`;
  console.log(`repo ${repo}, ${messages} messages of 1 KiB, idle, ${probeSeconds} s`);
  console.log(`GET /healthz (${probes.length}): p50 ${ms(quantile(probes, 0.5))}, p99 ${ms(quantile(probes, 0.99))}, max ${ms(Math.max(...probes))}, over 100 ms: ${probes.filter((x) => x > 100).length}`);
  console.log(`GetQueueAttributes counts (${counts.length}): p50 ${ms(quantile(counts, 0.5))}, max ${ms(Math.max(...counts))}`);
  console.log(`disk: ${(bytes / Math.max(1, messages)).toFixed(0)} bytes per message (sluice.db + WAL)`);
} finally {
  server.child.kill("SIGTERM");
  await new Promise((r) => server.child.once("exit", r));
  removeDir(dir);
}
cleanupNow();
