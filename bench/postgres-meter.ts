/**
 * What the database did during one measured phase of a PostgreSQL row: its processes' CPU (the
 * postmaster and every backend, read from /proc), write transactions, WAL bytes and flushes, and —
 * with `--pg-stats` (pg_stat_statements loaded) — the statements run, per 10 messages. This is how
 * Sluice's and pg-boss's costs on the database are compared statement by statement.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";

/** Linux USER_HZ: /proc/<pid>/stat counts in these. */
const ticksPerSecond = 100;
const statementsShown = 10;

export interface DatabaseUse {
  corePct?: number;
  /** Transactions that wrote (each took a transaction id). */
  writeTransactions: number;
  walBytes: number;
  walFlushes: number;
  statements?: Array<{ query: string; calls: number; rows: number; execMs: number }>;
}

/** CPU seconds of the cluster: the postmaster (with its reaped children) and its live children. */
export function clusterCpuSeconds(dataDir: string): number | undefined {
  try {
    const postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n", 1)[0]);
    let ticks = 0;
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      } catch {
        continue; // exited meanwhile
      }
      // Fields after the command name's closing paren: state ppid … utime(11) stime(12) cutime(13) cstime(14).
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const pid = Number(entry);
      if (pid === postmaster) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      else if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    }
    return ticks / ticksPerSecond;
  } catch {
    return undefined;
  }
}

interface Exact {
  /** The next transaction id: write transactions take one each. */
  nextXid: number;
  walLsn: string;
}

async function exact(client: pg.Client): Promise<Exact> {
  const { rows } = await client.query<{ next_xid: string; lsn: string }>("SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next_xid, pg_current_wal_lsn()::text AS lsn");
  return { nextXid: Number(rows[0]!.next_xid), walLsn: rows[0]!.lsn };
}

async function walFlushes(client: pg.Client): Promise<number> {
  await client.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await client.query<{ wal_sync: string }>("SELECT wal_sync FROM pg_stat_wal");
  return Number(rows[0]!.wal_sync);
}

export interface DatabaseMeter {
  /** Ends the phase: CPU, write transactions, WAL bytes and statements, as of now. */
  stop(): Promise<void>;
  /**
   * After the row's clients disconnected (a backend reports its WAL flushes when it exits, or
   * only every 10 s when idle): the whole account. Flushes count until then.
   */
  finish(): Promise<DatabaseUse>;
}

/**
 * Starts measuring. `statements`: pg_stat_statements is loaded in the cluster (bench/postgres.ts
 * does it for --pg-stats) and is reset here.
 */
export async function startDatabaseMeter(url: string, dataDir: string, statements: boolean): Promise<DatabaseMeter> {
  const client = new pg.Client({ connectionString: url });
  // A row that fails stops the cluster under this connection: not an error of the row's.
  client.on("error", () => undefined);
  await client.connect();
  if (statements) await client.query("SELECT pg_stat_statements_reset()");
  const flushes0 = await walFlushes(client);
  const before = await exact(client);
  const cpu0 = clusterCpuSeconds(dataDir);
  const wall0 = performance.now();
  let stopped: Omit<DatabaseUse, "walFlushes"> | undefined;
  return {
    async stop() {
      const wallS = (performance.now() - wall0) / 1000;
      const cpu1 = clusterCpuSeconds(dataDir);
      const after = await exact(client);
      const { rows } = await client.query<{ bytes: string }>("SELECT pg_wal_lsn_diff($1, $2)::bigint AS bytes", [after.walLsn, before.walLsn]);
      stopped = { writeTransactions: after.nextXid - before.nextXid, walBytes: Number(rows[0]!.bytes) };
      if (cpu0 !== undefined && cpu1 !== undefined) stopped.corePct = ((cpu1 - cpu0) / wallS) * 100;
      if (statements) {
        const { rows: stats } = await client.query<{ query: string; calls: string; rows: string; total_exec_time: number }>(
          `SELECT query, calls, rows, total_exec_time FROM pg_stat_statements
           WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat%' AND query NOT LIKE '%pg_current%'
           ORDER BY calls DESC`,
        );
        stopped.statements = stats.map((r) => ({ query: r.query.replace(/\s+/g, " ").trim(), calls: Number(r.calls), rows: Number(r.rows), execMs: r.total_exec_time }));
      }
    },
    async finish() {
      try {
        if (stopped === undefined) throw new Error("database meter finished before it was stopped");
        return { ...stopped, walFlushes: (await walFlushes(client)) - flushes0 };
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A log line: CPU per message cycled of each part of a row (in µs), and in all. On a machine whose
 * cores are all busy, throughput is roughly the inverse of the total: the figure to compare.
 */
export function describeCpuPerMessage(tag: string, msgsPerSec: number, corePctByPart: Record<string, number | undefined>): string {
  const parts = Object.entries(corePctByPart).flatMap(([part, pct]) => (pct === undefined ? [] : [[part, (pct / 100 / msgsPerSec) * 1e6] as const]));
  const total = parts.reduce((sum, [, us]) => sum + us, 0);
  return `${tag}: CPU per message ${parts.map(([part, us]) => `${part} ${Math.round(us)} µs`).join(", ")}; in all ${Math.round(total)} µs`;
}

/** Log lines: the database's work per 10 messages cycled. */
export function describeDatabaseUse(tag: string, use: DatabaseUse, messages: number): string[] {
  const per10 = (n: number): string => ((n * 10) / messages).toFixed(2);
  const cpu = use.corePct === undefined ? "" : `PostgreSQL CPU ${Math.round(use.corePct)}% of a core; `;
  const lines = [`${tag}: ${cpu}per 10 messages: ${per10(use.writeTransactions)} write transactions, ${per10(use.walFlushes)} WAL flushes, ${((use.walBytes * 10) / messages / 1024).toFixed(1)} KiB WAL`];
  if (use.statements) {
    const calls = use.statements.reduce((s, r) => s + r.calls, 0);
    const execMs = use.statements.reduce((s, r) => s + r.execMs, 0);
    lines.push(`${tag}: ${per10(calls)} statements per 10 messages (BEGIN/COMMIT included), ${((execMs * 1000) / messages).toFixed(0)} µs of execution per message; most called:`);
    for (const s of use.statements.slice(0, statementsShown)) {
      lines.push(`${tag}:   ${per10(s.calls).padStart(6)} × ${((s.execMs * 1000) / Math.max(1, s.calls)).toFixed(0).padStart(5)} µs  ${s.query.slice(0, 110)}`);
    }
  }
  return lines;
}
