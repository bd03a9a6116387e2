/**
 * Sluice jobs through the SDK (`@sluice/client`, from client/src so the bench always measures the
 * SDK in this tree): clients `queue.run()` — the SDK gathers the calls of one event-loop turn into
 * one `POST …/jobs/batch?wait=`, answered line by line as each job finishes (a lone call is one
 * `POST …/jobs?wait=`); one `queue.work()` worker completes each job with a tiny output.
 * SLUICE_BENCH_NO_BATCH=1 sends every submit on its own (`batchSubmits: false`), for A/B runs.
 */
import { Sluice } from "../../client/src/index.js";
import type { Worker } from "../../client/src/index.js";
import { startCpuMeter } from "../cpu.js";
import { leanFetch } from "../lean-fetch.js";
import { makeBody, parseBody } from "../payload.js";
import { Phase } from "../phase.js";
import type { PhaseResult } from "../phase.js";
import type { Row, RowContext, RowResult } from "../row.js";
import { type JobsWorkload, jobsPhaseOptions, jobsWorkload } from "./jobs-workload.js";
import { completeResult, startRowServer, withServerOutput } from "./sluice-row-server.js";
import { type SplitMeter, startSplitMeter } from "./time-split-meter.js";

export const sluiceJobsRow: Row = jobsRow("Sluice jobs via SDK (SQLite WAL, fsync before ack)");

/**
 * The same, with the queues' start limits set far above what the bench reaches (docs/jobs-api.md,
 * "Tenants and limits"): every lease then counts the running jobs and debits the token bucket,
 * and this row shows what that costs when no limit is hit.
 */
export const sluiceJobsLimitsRow: Row = jobsRow("Sluice jobs, queue limits set but never hit (rate 100k/s, maxRunning 1M)", {
  rateLimitPerSecond: 100_000,
  maxRunning: 1_000_000,
});

function jobsRow(label: string, queueSettings?: Record<string, number>): Row {
  return {
    peer: "sluice",
    label,
    async run(ctx: RowContext): Promise<RowResult> {
      const j = jobsWorkload(ctx.workload);
      const rs = await startRowServer(ctx, "sluice-jobs");
      const { server } = rs;
      // The SDK on a lean undici-Pool fetch (see lean-fetch.ts); SLUICE_BENCH_GLOBAL_FETCH=1 keeps Node's fetch.
      const lean = process.env.SLUICE_BENCH_GLOBAL_FETCH === "1" ? undefined : leanFetch(server.url, j.clients + j.workerConcurrency + 4);
      const batchSubmits = process.env.SLUICE_BENCH_NO_BATCH !== "1";
      const sluice = new Sluice({ url: server.url, attempts: 1, batchSubmits, ...(lean ? { fetch: lean.fetch } : {}) });
      let result: RowResult;
      let split: SplitMeter | undefined;
      try {
        if (queueSettings) {
          for (const queue of ["bench-jobs-warmup", "bench-jobs-main", "bench-jobs-paced"]) {
            const res = await fetch(`${server.url}/v1/queues/${queue}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(queueSettings) });
            if (res.status !== 200) throw new Error(`PUT /v1/queues/${queue}: ${res.status} ${await res.text()}`);
          }
        }
        await runSluiceJobsPhase(sluice, "bench-jobs-warmup", j, { label: "sluice jobs warm-up", messages: j.warmupJobs });
        ctx.log(`sluice-jobs: measuring ${j.jobs} jobs…`);
        const stopMeter = startCpuMeter(server.pid);
        split = startSplitMeter(ctx, "sluice-jobs", server.pid);
        const saturated = await runSluiceJobsPhase(sluice, "bench-jobs-main", j, { label: "sluice jobs saturated", messages: j.jobs });
        split.stop();
        const cpu = stopMeter();
        const rss = server.rssMiB();
        let paced: PhaseResult | undefined;
        if (j.pacedJobs > 0) {
          ctx.log(`sluice-jobs: paced run at ${j.pacedRatePerSec} jobs/s…`);
          paced = await runSluiceJobsPhase(sluice, "bench-jobs-paced", j, { label: "sluice jobs paced", messages: j.pacedJobs, ratePerSecond: j.pacedRatePerSec });
        }
        result = {
          peer: "sluice",
          label: this.label,
          durability: "SQLite WAL, fdatasync of the WAL before every acknowledgement (server default: pipelined sync)",
          saturated,
          cpu,
          notes: [
            batchSubmits
              ? "clients: queue.run(); the SDK sends one turn's calls as one POST …/jobs/batch?wait=, each job's line streamed as it finishes; worker: each outcome rides on its next lease request (complete: [...])"
              : "clients: queue.run(), each one POST …/jobs?wait= answered with the finished job (batchSubmits: false); worker: each outcome rides on its next lease request (complete: [...])",
            `loadgen CPU includes the SDK worker and clients; SDK fetch: ${lean ? "undici Pool (bench/lean-fetch.ts)" : "Node's global fetch"}`,
            ...(queueSettings ? [`queue settings: ${JSON.stringify(queueSettings)}`] : []),
          ],
        };
        completeResult(result, rs, paced, rss);
      } catch (err) {
        throw withServerOutput(err, rs);
      } finally {
        await lean?.close();
        await rs.stop();
      }
      split?.attach(result, j.jobs);
      return result;
    },
  };
}

async function runSluiceJobsPhase(sluice: Sluice, queueName: string, j: JobsWorkload, p: { label: string; messages: number; ratePerSecond?: number }): Promise<PhaseResult> {
  const phase = new Phase(jobsPhaseOptions(j, p));
  const queue = sluice.queue(queueName);
  // waitSeconds 1: an idle worker's parked lease comes back soon after the phase ends.
  const worker: Worker = queue.work(async () => ({ ok: true }), {
    concurrency: j.workerConcurrency,
    waitSeconds: 1,
    onError: (err) => phase.fail(err),
  });
  try {
    return await phase.run(async (seqs, sentAtMs) => {
      // batchSize 1: one job per call. The wait happens in the client, as an API server would do it.
      await Promise.all(
        seqs.map(async (seq) => {
          const done = await queue.run(makeBody(seq, sentAtMs, j.inputBytes), { timeoutMs: j.timeoutMs });
          if (done.status !== "succeeded") throw new Error(`job ${done.id} ended ${done.status}`);
          const { seq: got } = parseBody(done.input as string);
          if (phase.received(got, sentAtMs)) phase.done(1);
        }),
      );
    });
  } finally {
    await worker.close({ timeoutMs: 5_000 });
  }
}
