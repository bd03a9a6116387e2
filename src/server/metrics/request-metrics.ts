/** Requests by protocol, action and outcome code, and their latency: `sluice_requests_total`, `sluice_request_duration_seconds`. */
import { Counter, Histogram, type Registry } from "prom-client";
import type { RequestObserver } from "../../protocols/http/request-outcome.js";

/** From a cached receive (sub-millisecond) to a long poll's full 20 s. */
const durationBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

export function requestMetrics(registry: Registry): RequestObserver {
  const total = new Counter({
    name: "sluice_requests_total",
    help: "Requests answered, by protocol (sqs_json, sqs_query, jobs, http), action (SQS action, or METHOD and route pattern) and code (OK, or the error code answered).",
    labelNames: ["protocol", "action", "code"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "sluice_request_duration_seconds",
    help: "Time from a request's arrival to its answer, by protocol and action (long polls included: they wait by design).",
    labelNames: ["protocol", "action"] as const,
    buckets: durationBuckets,
    registers: [registry],
  });
  return (o) => {
    total.inc({ protocol: o.protocol, action: o.action, code: o.errorCode ?? "OK" });
    duration.observe({ protocol: o.protocol, action: o.action }, o.durationSeconds);
  };
}
