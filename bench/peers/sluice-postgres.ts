/**
 * Sluice on PostgreSQL: the standard SQS workload (sluice.ts) against N Sluice nodes sharing one
 * database — producers take turns over the nodes, consumers are spread across them, as behind a
 * load balancer. The database is the row's own (bench/postgres.ts), with durable commits.
 */
import { startCpuMeter } from "../cpu.js";
import type { PhaseResult } from "../phase.js";
import { benchPostgresDurability, benchUnixSocketNote, startBenchPostgres } from "../postgres.js";
import { describeCpuPerMessage, describeDatabaseUse } from "../postgres-meter.js";
import { processCpuSeconds } from "../procs.js";
import type { Row, RowContext, RowResult } from "../row.js";
import { LeanSqsClient } from "../sqs-client.js";
import { runSqsPhase, type SqsTarget } from "./sluice.js";
import { type RowServer, completeResult, startRowServer, withServerOutput } from "./sluice-row-server.js";

export function sluicePostgresRow(nodes: number): Row {
  const tag = `sluice-pg-${nodes}`;
  return {
    peer: "sluice",
    label: `Sluice on PostgreSQL, ${nodes} node${nodes === 1 ? "" : "s"}`,
    async run(ctx: RowContext): Promise<RowResult> {
      const w = ctx.workload;
      const db = await startBenchPostgres(ctx.log, ctx.pgStats, ctx.pgUnixSocket);
      const servers: RowServer[] = [];
      const clients: LeanSqsClient[] = [];
      try {
        // Each node's pool as deployed by default (docs/multi-node.md sizes it: statements in
        // flight, not clients, count), unless --pg-pool-size says otherwise.
        const pool = ctx.pgPoolSize === undefined ? [] : ["--postgres-pool-size", String(ctx.pgPoolSize)];
        ctx.log(`${tag}: ${ctx.pgPoolSize ?? "the default number of"} connections per node`);
        for (let i = 0; i < nodes; i++) servers.push(await startRowServer(ctx, `${tag}#${i + 1}`, ["--store", "postgres", "--postgres-url", db.url, ...pool]));
        for (const rs of servers) clients.push(new LeanSqsClient(rs.server.url, Math.ceil((w.producers + w.consumers) / nodes) + 2));
        const targets = async (base: string): Promise<SqsTarget[]> => {
          const queueUrl = await clients[0]!.createQueue(base);
          // Each node's URL for the queue: its own host and port.
          return clients.map((client, i) => ({ client, queueUrl: queueUrl.replace(servers[0]!.server.url, servers[i]!.server.url) }));
        };
        await runSqsPhase(await targets("bench-warmup"), w, { label: `${tag} warm-up`, messages: w.warmupMessages });
        const main = await targets("bench-main");
        ctx.log(`${tag}: measuring ${w.messages} messages…`);
        const dbMeter = await db.meter();
        const stopMeters = servers.map((rs) => startCpuMeter(rs.server.pid));
        // The table's server CPU: the nodes and the database together, as pg-boss's is its database's.
        const stopTotal = startCpuMeter(() => sumDefined([db.cpuSeconds(), ...servers.map((rs) => processCpuSeconds(rs.server.pid))]));
        const saturated = await runSqsPhase(main, w, { label: `${tag} saturated`, messages: w.messages });
        const total = stopTotal();
        const cpus = stopMeters.map((stop) => stop());
        await dbMeter.stop();
        let paced: PhaseResult | undefined;
        if (w.pacedMessages > 0) {
          ctx.log(`${tag}: paced latency run at ${w.pacedRatePerSec} msgs/s…`);
          paced = await runSqsPhase(await targets("bench-paced"), w, { label: `${tag} paced`, messages: w.pacedMessages, ratePerSecond: w.pacedRatePerSec });
        }
        const cpu = total;
        const nodesCorePct = cpus.reduce((sum, c) => sum + (c.serverCorePct ?? 0), 0);
        const result: RowResult = {
          peer: "sluice",
          label: this.label,
          durability: benchPostgresDurability,
          saturated,
          cpu,
          notes: [`server CPU is the ${nodes} Sluice node${nodes === 1 ? "" : "s"} and PostgreSQL together`, ...(ctx.pgUnixSocket === true ? [benchUnixSocketNote] : [])],
        };
        const completed = completeResult(result, servers[0]!, paced, servers[0]!.server.rssMiB());
        await Promise.all(clients.map((c) => c.close()));
        for (const rs of servers.splice(0)) await rs.stop();
        const dbUse = await dbMeter.finish();
        const dbLines = [
          describeCpuPerMessage(tag, saturated.msgsPerSec, { [nodes === 1 ? "node" : "nodes"]: nodesCorePct, PostgreSQL: dbUse.corePct, "load generator": cpu.loadGenCorePct }),
          ...describeDatabaseUse(tag, dbUse, w.messages),
        ];
        for (const line of dbLines) ctx.log(line);
        completed.notes.push(...dbLines);
        return completed;
      } catch (err) {
        throw servers[0] ? withServerOutput(err, servers[0]) : err;
      } finally {
        await Promise.all(clients.map((c) => c.close()));
        for (const rs of servers) await rs.stop();
        await db.stop();
      }
    },
  };
}

/** The sum, or undefined when any part can't be read (a meter must not mix parts in and out). */
function sumDefined(parts: Array<number | undefined>): number | undefined {
  let sum = 0;
  for (const p of parts) {
    if (p === undefined) return undefined;
    sum += p;
  }
  return sum;
}
