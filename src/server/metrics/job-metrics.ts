/** Jobs per queue: outcomes (`sluice_jobs_total`), run time (`sluice_job_run_seconds`) and queue wait. */
import { Counter, Histogram, type Registry } from "prom-client";
import type { JobEventFacts, JobOutcome } from "../job-event-facts.js";
import { type QueueLabelSet, otherQueuesLabel, type QueueLabels } from "./queue-labels.js";

/** Inference calls take from tens of milliseconds to minutes. */
const secondsBuckets = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** One queue's label objects, made once: every job event reuses them instead of building its own. */
interface QueueSeries {
  queue: QueueLabelSet;
  byOutcome: Map<JobOutcome, QueueLabelSet & { outcome: JobOutcome }>;
}

function seriesOf(queue: QueueLabelSet): QueueSeries {
  return { queue, byOutcome: new Map() };
}

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
  // By store account, then queue name: the queues with a label of their own (at most the label
  // limit; a queue's label never changes once given). The others share their account's `(other)`.
  const own = new Map<string, Map<string, QueueSeries>>();
  const other = new Map<string, QueueSeries>();
  const series = (account: string, name: string): QueueSeries => {
    const known = own.get(account)?.get(name);
    if (known) return known;
    const set = labels.of(account, name);
    if (set.queue === otherQueuesLabel) {
      let shared = other.get(set.account);
      if (!shared) other.set(set.account, (shared = seriesOf(set)));
      return shared;
    }
    let names = own.get(account);
    if (!names) own.set(account, (names = new Map()));
    const made = seriesOf(set);
    names.set(name, made);
    return made;
  };
  return (facts) => {
    if (facts.outcome === undefined && facts.runSeconds === undefined && facts.queueWaitSeconds === undefined) return;
    const s = series(facts.account, facts.queue);
    if (facts.outcome !== undefined) {
      let outcome = s.byOutcome.get(facts.outcome);
      if (!outcome) s.byOutcome.set(facts.outcome, (outcome = { ...s.queue, outcome: facts.outcome }));
      total.inc(outcome);
    }
    if (facts.runSeconds !== undefined) run.observe(s.queue, facts.runSeconds);
    if (facts.queueWaitSeconds !== undefined) wait.observe(s.queue, facts.queueWaitSeconds);
  };
}
