/**
 * pg-boss on the same PostgreSQL settings as the Sluice rows (bench/postgres.ts): producers
 * boss.insert(10 × 1 KiB) — one multi-row statement, as a batch send; consumers fetch up to 10
 * jobs and complete them together, like SQS consumers receiving and deleting batches. pg-boss has
 * no long poll: an empty fetch waits 20 ms before the next (its own work() polls every 0.5 s or
 * more, which would only add latency).
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import PgBoss from "pg-boss";
import { startCpuMeter } from "../cpu.js";
import { makeBody, parseBody } from "../payload.js";
import { Phase } from "../phase.js";
import type { PhaseOptions, PhaseResult } from "../phase.js";
import { benchPostgresDurability, benchUnixSocketNote, startBenchPostgres } from "../postgres.js";
import { describeCpuPerMessage, describeDatabaseUse } from "../postgres-meter.js";
import type { Row, RowContext, RowResult, Workload } from "../row.js";

const emptyFetchPauseMs = 20;

interface BenchJob {
  body: string;
}

export const pgbossRow: Row = {
  peer: "pgboss",
  label: "pg-boss (same PostgreSQL)",
  async run(ctx: RowContext): Promise<RowResult> {
    const w = ctx.workload;
    const db = await startBenchPostgres(ctx.log, ctx.pgStats, ctx.pgUnixSocket);
    const boss = new PgBoss({ connectionString: db.url, max: Math.max(10, Math.ceil((w.producers + w.consumers) / 2)), supervise: false, schedule: false });
    boss.on("error", (err) => ctx.log(`pgboss: ${err instanceof Error ? err.message : String(err)}`));
    try {
      await boss.start();
      await runBossPhase(boss, "bench-warmup", w, { label: "pgboss warm-up", messages: w.warmupMessages });
      ctx.log(`pgboss: measuring ${w.messages} messages…`);
      const dbMeter = await db.meter();
      const stopMeter = startCpuMeter(() => db.cpuSeconds());
      const saturated = await runBossPhase(boss, "bench-main", w, { label: "pgboss saturated", messages: w.messages });
      const cpu = stopMeter();
      await dbMeter.stop();
      let paced: PhaseResult | undefined;
      if (w.pacedMessages > 0) paced = await runBossPhase(boss, "bench-paced", w, { label: "pgboss paced", messages: w.pacedMessages, ratePerSecond: w.pacedRatePerSec });
      const result: RowResult = {
        peer: "pgboss",
        label: this.label,
        durability: benchPostgresDurability,
        version: `pg-boss ${pgbossVersion(ctx.repoRoot)}`,
        saturated,
        cpu,
        notes: ["server CPU is PostgreSQL's (every process of the cluster); pg-boss runs in the load-generator process", ...(ctx.pgUnixSocket === true ? [benchUnixSocketNote] : [])],
      };
      if (paced !== undefined) result.paced = paced;
      await boss.stop({ graceful: false, wait: true });
      const dbUse = await dbMeter.finish();
      const dbLines = [
        describeCpuPerMessage("pgboss", saturated.msgsPerSec, { "client (load generator)": cpu.loadGenCorePct, PostgreSQL: dbUse.corePct }),
        ...describeDatabaseUse("pgboss", dbUse, w.messages),
      ];
      for (const line of dbLines) ctx.log(line);
      result.notes.push(...dbLines);
      return result;
    } finally {
      await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
      await db.stop();
    }
  },
};

async function runBossPhase(boss: PgBoss, queue: string, w: Workload, p: Pick<PhaseOptions, "label" | "messages" | "ratePerSecond">): Promise<PhaseResult> {
  await boss.createQueue(queue);
  const phase = new Phase({ batchSize: w.batchSize, producers: w.producers, backlogMax: w.backlogMax, timeoutMs: w.phaseTimeoutMs, ...p });
  const consumers = Array.from({ length: w.consumers }, async () => {
    try {
      const iterationsMax = phase.options.messages + Math.ceil(phase.options.timeoutMs / emptyFetchPauseMs);
      for (let i = 0; i < iterationsMax && !phase.isOver; i++) {
        const jobs = await boss.fetch<BenchJob>(queue, { batchSize: 10 });
        if (jobs.length === 0) {
          await new Promise((r) => setTimeout(r, emptyFetchPauseMs));
          continue;
        }
        let fresh = 0;
        for (const job of jobs) {
          const { seq, sentAtMs } = parseBody(job.data.body);
          if (phase.received(seq, sentAtMs)) fresh++;
        }
        await boss.complete(queue, jobs.map((j) => j.id));
        phase.done(fresh);
      }
    } catch (err) {
      phase.fail(err);
    }
  });
  try {
    return await phase.run(async (seqs, sentAtMs) => {
      await boss.insert(seqs.map((seq) => ({ name: queue, data: { body: makeBody(seq, sentAtMs, w.bodyBytes) } })));
    });
  } finally {
    await Promise.all(consumers);
  }
}

function pgbossVersion(repoRoot: string): string {
  try {
    return (createRequire(join(repoRoot, "package.json"))("pg-boss/package.json") as { version: string }).version;
  } catch {
    return "?";
  }
}
