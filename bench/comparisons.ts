/**
 * Every comparison the bench runs, in order. Add later rows here (a Row in bench/peers/, listed
 * below); `--compare ID,…` runs only some.
 */
import { bullmqRow } from "./peers/bullmq.js";
import { bullmqJobsRow } from "./peers/bullmq-jobs.js";
import { jobsWorkload, jobsWorkloadLine } from "./peers/jobs-workload.js";
import { sluiceStandardRow } from "./peers/sluice.js";
import { bullmqStandardForFifoRow, fifoGroups, sluiceFifoRow } from "./peers/sluice-fifo.js";
import { sluiceJobsLimitsRow, sluiceJobsRow } from "./peers/sluice-jobs.js";
import { pgbossRow } from "./peers/pgboss.js";
import { rabbitmqRow } from "./peers/rabbitmq.js";
import { sluicePostgresRow } from "./peers/sluice-postgres.js";
import { bullmqBurstRow } from "./peers/burst-bullmq.js";
import { rabbitmqBurstRow } from "./peers/burst-rabbitmq.js";
import { burstProbeIntervalMs } from "./peers/burst-row.js";
import { sluiceBurstRow } from "./peers/burst-sluice.js";
import { sluiceStreamRow } from "./peers/sluice-stream.js";
import type { Comparison } from "./row.js";

export const comparisons: Comparison[] = [
  {
    id: "durable-standard-batch10",
    title: "Durable send → receive → delete, 1 KiB messages, batches of 10",
    rows: [sluiceStandardRow, bullmqRow, rabbitmqRow],
    baseline: "bullmq",
    alsoAgainst: ["rabbitmq"],
  },
  {
    id: "jobs",
    title: "Jobs round trips: submit → worker → complete → result back in the client (msgs/s = jobs/s; latency = submit → result)",
    rows: [sluiceJobsRow, bullmqJobsRow],
    baseline: "bullmq",
    describeWorkload: (w) => jobsWorkloadLine(jobsWorkload(w)),
  },
  {
    id: "jobs-limits",
    title: "Jobs round trips as in `jobs`, with the queue's start limits set but never hit, against none (what the limits cost a lease)",
    rows: [sluiceJobsRow, sluiceJobsLimitsRow],
    baseline: "sluice",
    describeWorkload: (w) => jobsWorkloadLine(jobsWorkload(w)),
  },
  {
    id: "fifo-groups",
    title: `FIFO, ${fifoGroups} message groups: durable send → receive → delete, 1 KiB messages, batches of 10 (BullMQ: its standard workload — no per-group FIFO in open-source BullMQ)`,
    rows: [sluiceFifoRow, bullmqStandardForFifoRow],
    baseline: "bullmq",
  },
  {
    id: "postgres",
    title: "On PostgreSQL: durable send → receive → delete, 1 KiB messages, batches of 10 — Sluice nodes vs pg-boss, same database settings",
    rows: [sluicePostgresRow(1), sluicePostgresRow(2), pgbossRow],
    baseline: "pgboss",
  },
  {
    id: "burst",
    title: "Burst: N × 1 KiB sent with no consumer, an idle spell with the backlog, then a drain — and a probe (send → receive → delete on another queue) every 100 ms throughout",
    rows: [sluiceBurstRow, rabbitmqBurstRow, bullmqBurstRow],
    baseline: "sluice",
    onlyWhenNamed: true,
    describeWorkload: (w) =>
      `${w.burstMessages.toLocaleString("en-US")} msgs · ${w.bodyBytes} B bodies · fill: ${w.producers} producers, batches of ${w.batchSize}, no consumer · idle ${w.burstIdleSeconds} s (backlog count once a second) · drain: ${w.burstConsumers} consumers (RabbitMQ: the same messages in flight at prefetch 100; BullMQ: 1 Worker, concurrency 100) · probe every ${burstProbeIntervalMs} ms on its own queue`,
  },
  {
    id: "stream",
    title: "Streamed output: jobs emitting chunks (ctx.emit) while their clients follow job.stream() — every chunk in order? worker emit → client receive latency",
    rows: [sluiceStreamRow],
    baseline: "sluice",
    onlyWhenNamed: true,
    describeWorkload: (w) =>
      `${w.streamJobs} jobs at once, each emitting ${w.streamRatePerSec.toLocaleString("en-US")} chunks/s for ${w.streamSeconds} s through the TypeScript SDK, one client per job reading job.stream() · target: every chunk in order, p99 emit → receive ≤ 50 ms`,
  },
];
