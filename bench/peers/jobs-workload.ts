/**
 * The jobs comparison's workload, shared by its Sluice and BullMQ rows: closed-loop clients, each
 * submitting one job and waiting for its result before submitting the next (the way an API server
 * calls an inference queue), and one worker process-side with a fixed concurrency that does no work.
 * A "round trip" is submit → a worker runs it → its result is back in the submitting client.
 */
import type { PhaseOptions } from "../phase.js";
import type { Workload } from "../row.js";

export interface JobsWorkload {
  jobs: number;
  warmupJobs: number;
  /** Clients, each with one job in flight (submit, then wait for the result). */
  clients: number;
  /** Handlers running at once in the worker. */
  workerConcurrency: number;
  inputBytes: number;
  pacedRatePerSec: number;
  pacedJobs: number;
  timeoutMs: number;
}

/**
 * Scaled from the SQS workload so `--messages` shortens every comparison alike: 30 % of it
 * (30,000 jobs by default, ≈ 6 s per peer). At 10 % the measured window was ≈ 2 s, short enough
 * that both peers read 5–20 % below their steady rate (docs/benchmarks-history.md, "A longer window").
 */
export function jobsWorkload(w: Workload): JobsWorkload {
  return {
    jobs: Math.max(500, Math.round(w.messages * 0.3)),
    warmupJobs: Math.min(3_000, Math.max(100, Math.round(w.warmupMessages * 0.6))),
    clients: w.jobClients,
    workerConcurrency: 32,
    inputBytes: w.bodyBytes,
    pacedRatePerSec: 200,
    pacedJobs: w.pacedMessages > 0 ? 1_000 : 0,
    timeoutMs: w.phaseTimeoutMs,
  };
}

export function jobsPhaseOptions(j: JobsWorkload, p: { label: string; messages: number; ratePerSecond?: number }): PhaseOptions {
  // batchSize 1: a job is one submit. backlogMax = clients: each client has one job in flight.
  return { batchSize: 1, producers: j.clients, backlogMax: j.clients, timeoutMs: j.timeoutMs, ...p };
}

export function jobsWorkloadLine(j: JobsWorkload): string {
  return `${j.jobs.toLocaleString("en-US")} jobs per peer (after ${j.warmupJobs.toLocaleString("en-US")} warm-up) · ${j.inputBytes} B inputs · ${j.clients} clients, each submit → wait for the result → next · 1 worker, concurrency ${j.workerConcurrency} · paced phase ${j.pacedJobs.toLocaleString("en-US")} jobs at ${j.pacedRatePerSec}/s`;
}
