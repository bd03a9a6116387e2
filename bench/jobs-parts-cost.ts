/**
 * CPU per job of parts of the jobs round trip above the store, in one process, where load on a
 * shared machine blurs less than in the bench: the metrics of a job's three lifecycle events
 * (submitted, started, succeeded), the job's JSON in its lease answer and its result line, and
 * the submit-time check of a webhook URL (its host's DNS lookup; `localhost`, so no network needed).
 * Uses only long-standing entry points, so a snapshot of an older revision compares.
 *
 * Usage: npx tsx bench/jobs-parts-cost.ts [rounds, default 3]
 */
import { Registry } from "prom-client";
import type { JobRecord } from "../src/core/index.js";
import { checkWebhookTarget } from "../src/protocols/jobs/webhooks/url-policy.js";
import { jobJson } from "../src/protocols/jobs/wire.js";
import { jobMetrics } from "../src/server/metrics/job-metrics.js";
import { QueueLabels } from "../src/server/metrics/queue-labels.js";

const rounds = Number(process.argv[2] ?? 3);

/** µs of CPU (every thread's: lookups run on libuv's pool) per awaited call of `f`. */
async function perAsyncCall(calls: number, f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < calls / 10; i++) await f();
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) await f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

/** µs of CPU per call of `f`, after a tenth as many calls to warm it. */
function perCall(calls: number, f: (i: number) => unknown): number {
  for (let i = 0; i < calls / 10; i++) f(i);
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) f(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const observe = jobMetrics(new Registry(), new QueueLabels(1000, "000000000000"));
const facts = [
  { queue: "bench-jobs-main", account: "", arrival: true, outcome: "submitted" as const },
  { queue: "bench-jobs-main", account: "", arrival: false, queueWaitSeconds: 0.021 },
  { queue: "bench-jobs-main", account: "", arrival: false, outcome: "succeeded" as const, runSeconds: 0.013 },
];

const nowMs = Date.UTC(2026, 10, 28, 17, 0, 0);
const running: JobRecord = {
  id: "0b7e3c1e-4a53-4b0e-9d1c-2f3e4a5b6c7d",
  seq: 1234,
  queueId: 7,
  queueName: "bench-jobs-main",
  status: "running",
  inputJson: JSON.stringify(`1234:5678.901:${"x".repeat(1010)}`),
  attempt: 1,
  maxAttempts: 3,
  priority: 0,
  createdAtMs: nowMs,
  startedAtMs: nowMs + 12,
  updatedAtMs: nowMs + 12,
  timeoutSeconds: 300,
  cancelRequested: false,
  leaseToken: "lease-9f8e7d6c5b4a",
  leaseSeconds: 30,
  leaseExpiresAtMs: nowMs + 30_012,
};
const succeeded: JobRecord = { ...running, status: "succeeded", outputJson: '{"ok":true}', finishedAtMs: nowMs + 25, updatedAtMs: nowMs + 25 };

for (let round = 1; round <= rounds; round++) {
  const metrics = perCall(300_000, () => {
    for (const f of facts) observe(f);
  });
  const json = perCall(200_000, (i) => jobJson({ ...running, seq: i }, { lease: true }).length + jobJson({ ...succeeded, seq: i }).length);
  // Refused (loopback), but only once its host was looked up: the lookup is what is measured.
  const webhook = await perAsyncCall(2_000, () => checkWebhookTarget("http://localhost:9/hook", { allowPrivate: false }).catch(() => undefined));
  console.log(`round ${round}: job metrics (3 events) ${metrics.toFixed(2)} µs/job · jobJson (lease + result) ${json.toFixed(2)} µs/job · webhook URL check ${webhook.toFixed(1)} µs/submit`);
}
