/**
 * BullMQ on a private Redis with AOF fsync on every write — the durable peer. Producers
 * Queue.addBulk(10 × 1 KiB); one Worker with concurrency 100 and removeOnComplete; latency is
 * from add to the start of processing, "done" is the job's `completed` event.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { Queue, Worker } from "bullmq";
import type { ConnectionOptions } from "bullmq";
import { startCpuMeter } from "../cpu.js";
import { makeBody, parseBody } from "../payload.js";
import { Phase } from "../phase.js";
import type { PhaseOptions, PhaseResult } from "../phase.js";
import { ensureIoredisResolvable, startRedis } from "../redis.js";
import type { Row, RowContext, RowResult, Workload } from "../row.js";
import { processRssMiB } from "../procs.js";

const workerConcurrency = 100;

interface BenchJobData {
  body: string;
}

export const bullmqRow: Row = {
  peer: "bullmq",
  label: "BullMQ + Redis (AOF, appendfsync always)",
  async run(ctx: RowContext): Promise<RowResult> {
    const w = ctx.workload;
    await ensureIoredisResolvable(ctx.repoRoot, ctx.log);
    const redis = await startRedis(ctx.log);
    ctx.log(`bullmq: redis pid ${redis.pid} on port ${redis.port} (${redis.version.split(" ").slice(0, 3).join(" ")})`);
    // maxRetriesPerRequest: null is what BullMQ requires for its blocking worker connection.
    const connection: ConnectionOptions = { host: redis.host, port: redis.port, maxRetriesPerRequest: null } as ConnectionOptions;
    try {
      await runBullPhase(connection, "bench-warmup", w, { label: "bullmq warm-up", messages: w.warmupMessages });
      ctx.log(`bullmq: measuring ${w.messages} messages…`);
      const stopMeter = startCpuMeter(redis.pid);
      const saturated = await runBullPhase(connection, "bench-main", w, { label: "bullmq saturated", messages: w.messages });
      const cpu = stopMeter();
      const rss = processRssMiB(redis.pid);
      let paced: PhaseResult | undefined;
      if (w.pacedMessages > 0) {
        ctx.log(`bullmq: paced latency run at ${w.pacedRatePerSec} msgs/s…`);
        paced = await runBullPhase(connection, "bench-paced", w, { label: "bullmq paced", messages: w.pacedMessages, ratePerSecond: w.pacedRatePerSec });
      }
      const result: RowResult = {
        peer: "bullmq",
        label: this.label,
        durability: "Redis appendonly yes, appendfsync always, RDB off",
        version: `bullmq ${bullmqVersion(ctx.repoRoot)}; ${redis.version}`,
        saturated,
        cpu,
        notes: ["server CPU is redis-server only; BullMQ's worker logic runs in the load-generator process"],
      };
      if (paced !== undefined) result.paced = paced;
      if (rss !== undefined) result.serverRssMiB = rss;
      return result;
    } finally {
      await redis.stop();
    }
  },
};

async function runBullPhase(connection: ConnectionOptions, queueName: string, w: Workload, p: Pick<PhaseOptions, "label" | "messages" | "ratePerSecond">): Promise<PhaseResult> {
  const phase = new Phase({ batchSize: w.batchSize, producers: w.producers, backlogMax: w.backlogMax, timeoutMs: w.phaseTimeoutMs, ...p });
  const queue = new Queue<BenchJobData>(queueName, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 } });
  const worker = new Worker<BenchJobData, boolean>(
    queueName,
    async (job) => {
      const { seq, sentAtMs } = parseBody(job.data.body);
      return phase.received(seq, sentAtMs);
    },
    { connection, concurrency: workerConcurrency },
  );
  worker.on("completed", (_job, fresh) => {
    if (fresh) phase.done(1);
  });
  worker.on("failed", (_job, err) => phase.fail(err));
  worker.on("error", (err) => phase.fail(err));
  queue.on("error", (err) => phase.fail(err));
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
    return await phase.run(async (seqs, sentAtMs) => {
      await queue.addBulk(seqs.map((seq) => ({ name: "m", data: { body: makeBody(seq, sentAtMs, w.bodyBytes) } })));
    });
  } finally {
    // allSettled: a close that fails on a half-initialised client must not mask the real error.
    await Promise.allSettled([worker.close(), queue.close()]);
  }
}

function bullmqVersion(repoRoot: string): string {
  try {
    const req = createRequire(join(repoRoot, "package.json"));
    return (req("bullmq/package.json") as { version: string }).version;
  } catch {
    return "?";
  }
}
