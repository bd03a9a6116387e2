/** Jobs per queue: outcomes (`sluice_jobs_total`), run time (`sluice_job_run_seconds`) and queue wait. */
import { Counter, Histogram, type Registry } from "prom-client";
import type { JobEventFacts } from "../job-event-facts.js";
import type { QueueLabels } from "./queue-labels.js";

/** Inference calls take from tens of milliseconds to minutes. */
const secondsBuckets = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export function jobMetrics(registry: Registry, labels: QueueLabels): (facts: JobEventFacts) => void {
  const total = new Counter({
    name: "sluice_jobs_total",
    help: "Jobs by queue and outcome: submitted, succeeded, failed (attempts exhausted or not retryable), canceled, retried (an attempt failed and the job was queued again).",
    labelNames: ["account", "queue", "outcome"] as const,
    registers: [registry],
  });
  const run = new Histogram({
    name: "sluice_job_run_seconds",
    help: "How long attempts ran, from lease to the worker's report (or the lease's expiry), by queue.",
    labelNames: ["account", "queue"] as const,
    buckets: secondsBuckets,
    registers: [registry],
  });
  const wait = new Histogram({
    name: "sluice_job_queue_wait_seconds",
    help: "How long jobs waited from submit to their first attempt's start (a requested delay included), by queue.",
    labelNames: ["account", "queue"] as const,
    buckets: secondsBuckets,
    registers: [registry],
  });
  return (facts) => {
    if (facts.outcome === undefined && facts.runSeconds === undefined && facts.queueWaitSeconds === undefined) return;
    const queue = labels.of(facts.account, facts.queue);
    if (facts.outcome !== undefined) total.inc({ ...queue, outcome: facts.outcome });
    if (facts.runSeconds !== undefined) run.observe(queue, facts.runSeconds);
    if (facts.queueWaitSeconds !== undefined) wait.observe(queue, facts.queueWaitSeconds);
  };
}
