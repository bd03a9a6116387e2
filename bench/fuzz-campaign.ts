/**
 * A fuzz campaign against a running server, for measuring (the bounded one in `npm test` is
 * test/hardening/fuzz.test.ts): the same seeded malformed requests, as many as asked, then the
 * answers by status, how many were 5xx or carried no error code, and the server's resident memory
 * (sampled from /proc while the campaign runs).
 *
 *   npm run fuzz -- --url http://127.0.0.1:9324 --pid <server pid> --requests 100000 [--seed N]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import { Fuzzer, codeOf, seededRandom } from "../test/hardening/fuzz-inputs.js";

const { values } = parseArgs({ options: { url: { type: "string" }, pid: { type: "string" }, requests: { type: "string" }, seed: { type: "string" }, concurrency: { type: "string" } } });
if (!values.url) throw new Error("--url is required");
const url = values.url.replace(/\/$/, "");
const total = Number(values.requests ?? 100_000);
const seed = Number(values.seed ?? 20261126);
const concurrency = Number(values.concurrency ?? 16);

function rssMiB(): number | undefined {
  if (!values.pid) return undefined;
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${values.pid}/status`, "utf8"))?.[1];
  return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
}

const agent = new Agent({ connections: concurrency, bodyTimeout: 60_000, headersTimeout: 60_000 });
const fuzzer = new Fuzzer(seededRandom(seed), ["fz", "fz-a", "fz-b.fifo", "fz_c", "fz-dlq"], new URL(url).host);
const byStatus = new Map<number, number>();
const samples: string[] = [];
let sent = 0;
let serverErrors = 0;
let uncoded = 0;
let failures = 0;
const rssStart = rssMiB();
let rssPeak = rssStart ?? 0;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB() ?? 0)), 250);

await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (sent < total) {
      sent++;
      const r = fuzzer.next();
      try {
        const res = await request(url + r.path, { method: r.method as "GET", headers: r.headers, body: r.body, dispatcher: agent });
        const answer = { status: res.statusCode, headers: res.headers, body: await res.body.text() };
        byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
        if (answer.status >= 500) serverErrors++;
        if (answer.status >= 400 && r.method !== "HEAD" && codeOf(answer) === undefined) {
          uncoded++;
          if (samples.length < 5) samples.push(`${r.method} ${r.path.slice(0, 60)} → ${answer.status} ${answer.body.slice(0, 120)}`);
        }
      } catch (err) {
        failures++;
        if (samples.length < 5) samples.push(`${r.method} ${r.path.slice(0, 60)} → ${(err as Error).message}`);
      }
    }
  }),
);
clearInterval(sampler);
await agent.close();
console.log(JSON.stringify({ seed, sent, byStatus: Object.fromEntries([...byStatus].sort((a, b) => a[0] - b[0])), serverErrors, uncoded, connectionFailures: failures, rssMiB: { start: rssStart, peak: rssPeak, end: rssMiB() }, samples }, null, 2));
