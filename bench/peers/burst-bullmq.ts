/**
 * The burst (bench/burst.ts) on BullMQ + Redis (AOF fsync always): producers Queue.addBulk(10);
 * the drain is one Worker with concurrency 100, as in the durable row; the probe adds a job to
 * its own queue and takes it with a manual worker (getNextJob → moveToCompleted); the backlog
 * count is Queue.getWaitingCount().
 */
import { randomUUID } from "node:crypto";
import { Queue, Worker } from "bullmq";
import type { ConnectionOptions } from "bullmq";
import { type BurstPeer, dirBytes, runBurst } from "../burst.js";
import { processRssMiB } from "../procs.js";
import { ensureIoredisResolvable, startRedis } from "../redis.js";
import type { Row, RowContext, RowResult } from "../row.js";
import { burstOptions, burstRowResult } from "./burst-row.js";

const workerConcurrency = 100;

interface BurstJob {
  body: string;
}

export const bullmqBurstRow: Row = {
  peer: "bullmq",
  label: "BullMQ + Redis (AOF, appendfsync always)",
  async run(ctx: RowContext): Promise<RowResult> {
    const o = burstOptions(ctx.workload);
    await ensureIoredisResolvable(ctx.repoRoot, ctx.log);
    const redis = await startRedis(ctx.log);
    const connection: ConnectionOptions = { host: redis.host, port: redis.port, maxRetriesPerRequest: null } as ConnectionOptions;
    const opts = { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 } };
    const queue = new Queue<BurstJob>("burst", opts);
    const probeQueue = new Queue<BurstJob>("burst-probe", opts);
    const probeWorker = new Worker<BurstJob>("burst-probe", null, { connection });
    const probeToken = randomUUID();
    try {
      await Promise.all([queue.waitUntilReady(), probeQueue.waitUntilReady(), probeWorker.waitUntilReady()]);
      const peer: BurstPeer = {
        send: async (bodies) => {
          await queue.addBulk(bodies.map((body) => ({ name: "m", data: { body } })));
        },
        async drain(_consumers, onRemoved, signal) {
          let failure: unknown;
          const worker = new Worker<BurstJob>("burst", async () => true, { connection, concurrency: workerConcurrency });
          const stopped = new Promise<void>((resolve) => {
            signal.addEventListener("abort", () => resolve(), { once: true });
            const fail = (err: unknown): void => {
              failure ??= err;
              resolve();
            };
            worker.on("completed", (job) => {
              try {
                onRemoved([job.data.body]);
              } catch (err) {
                fail(err);
              }
            });
            worker.on("failed", (_job, err) => fail(err));
            worker.on("error", fail);
          });
          try {
            await stopped;
          } finally {
            await worker.close();
          }
          if (failure !== undefined) throw failure;
        },
        async probe() {
          await probeQueue.add("p", { body: "probe" });
          const job = await probeWorker.getNextJob(probeToken);
          if (job === undefined) throw new Error("probe job not received");
          await job.moveToCompleted("ok", probeToken, false);
        },
        countBacklog: () => queue.getWaitingCount(),
        rssMiB: () => processRssMiB(redis.pid),
        diskBytes: () => dirBytes(redis.dataDir),
      };
      const burst = await runBurst(peer, o, (line) => ctx.log(`bullmq-${line}`));
      return burstRowResult({
        peer: "bullmq",
        label: this.label,
        durability: "Redis appendonly yes, appendfsync always, RDB off",
        burst,
        notes: [`drain: one Worker, concurrency ${workerConcurrency}; RSS: redis-server; disk: its AOF directory`],
      });
    } finally {
      await Promise.allSettled([probeWorker.close(), queue.close(), probeQueue.close()]);
      await redis.stop();
    }
  },
};
