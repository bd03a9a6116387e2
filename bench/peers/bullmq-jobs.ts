/**
 * BullMQ's equivalent of a jobs round trip: clients `Queue.add()` then `job.waitUntilFinished()`
 * (BullMQ's QueueEvents stream), one `Worker` (same concurrency as Sluice's) returns a tiny result.
 * Redis with AOF `appendfsync always`, as in the SQS comparison.
 */
import { Queue, QueueEvents, Worker } from "bullmq";
import type { ConnectionOptions, Job } from "bullmq";
import { startCpuMeter } from "../cpu.js";
import { makeBody, parseBody } from "../payload.js";
import { Phase } from "../phase.js";
import type { PhaseResult } from "../phase.js";
import { processRssMiB } from "../procs.js";
import { ensureIoredisResolvable, startRedis } from "../redis.js";
import type { Row, RowContext, RowResult } from "../row.js";
import { type JobsWorkload, jobsPhaseOptions, jobsWorkload } from "./jobs-workload.js";

interface BenchJobData {
  body: string;
}

export const bullmqJobsRow: Row = {
  peer: "bullmq",
  label: "BullMQ + Redis (AOF, appendfsync always)",
  async run(ctx: RowContext): Promise<RowResult> {
    const j = jobsWorkload(ctx.workload);
    await ensureIoredisResolvable(ctx.repoRoot, ctx.log);
    const redis = await startRedis(ctx.log);
    ctx.log(`bullmq-jobs: redis pid ${redis.pid} on port ${redis.port}`);
    const connection: ConnectionOptions = { host: redis.host, port: redis.port, maxRetriesPerRequest: null } as ConnectionOptions;
    try {
      await runBullJobsPhase(connection, "bench-jobs-warmup", j, { label: "bullmq jobs warm-up", messages: j.warmupJobs });
      ctx.log(`bullmq-jobs: measuring ${j.jobs} jobs…`);
      const stopMeter = startCpuMeter(redis.pid);
      const saturated = await runBullJobsPhase(connection, "bench-jobs-main", j, { label: "bullmq jobs saturated", messages: j.jobs });
      const cpu = stopMeter();
      const rss = processRssMiB(redis.pid);
      let paced: PhaseResult | undefined;
      if (j.pacedJobs > 0) {
        ctx.log(`bullmq-jobs: paced run at ${j.pacedRatePerSec} jobs/s…`);
        paced = await runBullJobsPhase(connection, "bench-jobs-paced", j, { label: "bullmq jobs paced", messages: j.pacedJobs, ratePerSecond: j.pacedRatePerSec });
      }
      const result: RowResult = {
        peer: "bullmq",
        label: this.label,
        durability: "Redis appendonly yes, appendfsync always, RDB off",
        version: redis.version,
        saturated,
        cpu,
        notes: ["server CPU is redis-server only; BullMQ's worker, QueueEvents and producers run in the load generator"],
      };
      if (paced !== undefined) result.paced = paced;
      if (rss !== undefined) result.serverRssMiB = rss;
      return result;
    } finally {
      await redis.stop();
    }
  },
};

async function runBullJobsPhase(connection: ConnectionOptions, queueName: string, j: JobsWorkload, p: { label: string; messages: number; ratePerSecond?: number }): Promise<PhaseResult> {
  const phase = new Phase(jobsPhaseOptions(j, p));
  // Completed jobs are kept for a while: waitUntilFinished reads the result of one that finished
  // before its listener was attached. Removed by age so Redis doesn't grow through the run.
  const queue = new Queue<BenchJobData>(queueName, { connection, defaultJobOptions: { removeOnComplete: { age: 60 }, removeOnFail: 1000 } });
  const events = new QueueEvents(queueName, { connection });
  // waitUntilFinished adds listeners per waiting job: one per client is expected, not a leak.
  events.setMaxListeners(j.clients * 2 + 10);
  const worker = new Worker<BenchJobData, { ok: boolean }>(queueName, async () => ({ ok: true }), { connection, concurrency: j.workerConcurrency });
  worker.on("failed", (_job, err) => phase.fail(err));
  worker.on("error", (err) => phase.fail(err));
  queue.on("error", (err) => phase.fail(err));
  events.on("error", (err) => phase.fail(err));
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady(), events.waitUntilReady()]);
    return await phase.run(async (seqs, sentAtMs) => {
      await Promise.all(
        seqs.map(async (seq) => {
          const job: Job<BenchJobData> = await queue.add("m", { body: makeBody(seq, sentAtMs, j.inputBytes) });
          await job.waitUntilFinished(events, j.timeoutMs);
          const { seq: got } = parseBody(job.data.body);
          if (phase.received(got, sentAtMs)) phase.done(1);
        }),
      );
    });
  } finally {
    await Promise.allSettled([worker.close(), queue.close(), events.close()]);
  }
}
