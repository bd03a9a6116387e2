/**
 * The jobs' metrics from lifecycle facts: each queue's series counted under the labels it was
 * first given, the queues past the label limit summed under their account's `(other)`.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { jobMetrics } from "../../src/server/metrics/job-metrics.js";
import { QueueLabels } from "../../src/server/metrics/queue-labels.js";
import { sample } from "../support/metrics-text.js";

describe("jobMetrics", () => {
  it("counts each queue's outcomes and times under its labels, past the limit under (other)", async () => {
    const registry = new Registry();
    const observe = jobMetrics(registry, new QueueLabels(2, "000000000000"));
    for (const [account, queue] of [["", "a"], ["", "a"], ["", "b"], ["", "c"], ["", "d"], ["111111111111", "a"]] as const) {
      observe({ account, queue, arrival: true, outcome: "submitted" });
      observe({ account, queue, arrival: false, queueWaitSeconds: 0.02 });
      observe({ account, queue, arrival: false, outcome: "succeeded", runSeconds: 0.3 });
    }
    const text = await registry.metrics();
    const own = { account: "000000000000" };
    expect(sample(text, "sluice_jobs_total", { ...own, queue: "a", outcome: "submitted" })).toBe(2);
    expect(sample(text, "sluice_jobs_total", { ...own, queue: "b", outcome: "succeeded" })).toBe(1);
    expect(sample(text, "sluice_jobs_total", { ...own, queue: "(other)", outcome: "succeeded" })).toBe(2);
    expect(sample(text, "sluice_jobs_total", { account: "111111111111", queue: "(other)", outcome: "submitted" })).toBe(1);
    expect(sample(text, "sluice_job_run_seconds_count", { ...own, queue: "a" })).toBe(2);
    expect(sample(text, "sluice_job_run_seconds_bucket", { ...own, queue: "(other)", le: "0.25" })).toBe(0);
    expect(sample(text, "sluice_job_run_seconds_bucket", { ...own, queue: "(other)", le: "0.5" })).toBe(2);
    expect(sample(text, "sluice_job_queue_wait_seconds_count", { ...own, queue: "(other)" })).toBe(2);
    expect(new Set([...text.matchAll(/queue="([^"]*)"/g)].map((m) => m[1]))).toEqual(new Set(["a", "b", "(other)"]));
  });
});
