/**
 * Server CPU per message for the SQS query protocol (form POSTs, as the query-era SDKs send):
 * SendMessageBatch of ten 1 KiB messages → ReceiveMessage of ten → DeleteMessageBatch, 16 loops
 * at once. The `npm run bench` row speaks JSON only. With a baseline revision, its server (a clean
 * snapshot) and the work tree's (or --server-rev's snapshot) alternate, round by round.
 *
 * Usage: npx tsx bench/query-cost.ts [--baseline-rev REV] [--server-rev REV] [--rounds N, default 3] [--messages N, default 20000]
 */
import { mkdtempSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { cleanupNow, removeDir, trackDir } from "./cleanup.js";
import { snapshotRevision } from "./peers/snapshot.js";
import { processCpuSeconds, startChild, stopChild } from "./procs.js";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const { values } = parseArgs({ options: { "baseline-rev": { type: "string" }, "server-rev": { type: "string" }, rounds: { type: "string" }, messages: { type: "string" } } });
const rounds = Number(values.rounds ?? 3);
const messages = Number(values.messages ?? 20_000);
const warmup = 2_000;
const loops = 16;
const agent = new http.Agent({ keepAlive: true, maxSockets: loops });
const body = encodeURIComponent("x".repeat(1024));

function post(url: string, form: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers = { "content-type": "application/x-www-form-urlencoded; charset=utf-8", "content-length": Buffer.byteLength(form) };
    const req = http.request(url, { method: "POST", agent, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode}: ${text}`))));
    });
    req.on("error", reject);
    req.end(form);
  });
}

/** Cycles `count` messages through the queue at `base`, `loops` at a time. */
async function cycle(base: string, queueUrl: string, count: number): Promise<void> {
  let started = 0;
  const loop = async (): Promise<void> => {
    while (started < count) {
      started += 10;
      const entries = Array.from({ length: 10 }, (_, i) => `SendMessageBatchRequestEntry.${i + 1}.Id=m${i}&SendMessageBatchRequestEntry.${i + 1}.MessageBody=${body}`);
      await post(`${base}/`, `Action=SendMessageBatch&QueueUrl=${queueUrl}&${entries.join("&")}`);
      const xml = await post(`${base}/`, `Action=ReceiveMessage&QueueUrl=${queueUrl}&MaxNumberOfMessages=10`);
      const handles = [...xml.matchAll(/<ReceiptHandle>([^<]*)<\/ReceiptHandle>/g)].map((m) => m[1]!);
      if (handles.length === 0) continue;
      const deletes = handles.map((h, i) => `DeleteMessageBatchRequestEntry.${i + 1}.Id=d${i}&DeleteMessageBatchRequestEntry.${i + 1}.ReceiptHandle=${encodeURIComponent(h)}`);
      await post(`${base}/`, `Action=DeleteMessageBatch&QueueUrl=${queueUrl}&${deletes.join("&")}`);
    }
  };
  await Promise.all(Array.from({ length: loops }, loop));
}

/** Server µs of CPU per message, for the server in `root`. */
async function measure(root: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-query-cost-"));
  trackDir(dir);
  const { child, match } = await startChild(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "serve", "--port", "0", "--data-dir", dir], /Sluice listening on (http:\/\/[^\s"]+)/, 120_000, { cwd: root });
  try {
    const base = match[1]!;
    await post(`${base}/`, "Action=CreateQueue&QueueName=bench");
    const queueUrl = encodeURIComponent(`${base}/000000000000/bench`);
    await cycle(base, queueUrl, warmup);
    const before = processCpuSeconds(child.pid)!;
    await cycle(base, queueUrl, messages);
    return ((processCpuSeconds(child.pid)! - before) * 1e6) / messages;
  } finally {
    await stopChild(child);
    removeDir(dir);
  }
}

const baseline = values["baseline-rev"] === undefined ? undefined : snapshotRevision(repoRoot, values["baseline-rev"]);
const server = values["server-rev"] === undefined ? undefined : snapshotRevision(repoRoot, values["server-rev"]);
const servers = [
  ...(baseline ? [{ name: `${values["baseline-rev"]} (${baseline.commit})`, root: baseline.dir }] : []),
  server ? { name: `${values["server-rev"]} (${server.commit})`, root: server.dir } : { name: "work tree", root: repoRoot },
];
const results = new Map<string, number[]>();
try {
  for (let r = 0; r < rounds; r++) {
    for (const s of servers) results.set(s.name, [...(results.get(s.name) ?? []), Math.round(await measure(s.root))]);
  }
  for (const [name, perRound] of results) console.log(`${name}: server µs/msg per round ${perRound.join(" / ")}`);
} finally {
  agent.destroy();
  baseline?.remove();
  server?.remove();
  cleanupNow();
}
