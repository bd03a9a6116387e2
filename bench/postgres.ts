/**
 * A private PostgreSQL for the PostgreSQL rows: the machine's PostgreSQL 15, a fresh cluster per
 * row, with the defaults that make a commit durable — fsync on, synchronous_commit on,
 * full_page_writes on — the same for Sluice and pg-boss. Removed when the row ends.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startCluster, stopCluster } from "../test/support/postgres-cluster.js";
import { trackDir } from "./cleanup.js";
import { pinServerTree } from "./pinning.js";
import { clusterCpuSeconds, type DatabaseMeter, startDatabaseMeter } from "./postgres-meter.js";

export const benchPostgresSettings: Readonly<Record<string, string>> = {
  fsync: "on",
  synchronous_commit: "on",
  full_page_writes: "on",
  max_connections: "200",
  shared_buffers: "256MB",
};

export const benchPostgresDurability = "PostgreSQL 15, fsync on, synchronous_commit on (every commit flushed to the WAL before it is acknowledged)";

/** A row's note when its clients used the Unix socket: such figures compare only with their like. */
export const benchUnixSocketNote = "clients connected through PostgreSQL's Unix socket (--pg-unix-socket), not TCP";

export interface BenchPostgres {
  /** A connection string to a database made for the row. */
  url: string;
  port: number;
  /** CPU seconds of the cluster's processes so far: the server side of a row's CPU. */
  cpuSeconds(): number | undefined;
  /** Starts measuring the database's work (bench/postgres-meter.ts). */
  meter(): Promise<DatabaseMeter>;
  stop(): Promise<void>;
}

/**
 * `statements` (--pg-stats): load pg_stat_statements, so the meter lists the statements run.
 * `unixSocket` (--pg-unix-socket): clients connect through the cluster's Unix socket instead of
 * TCP on loopback — an extra measurement only, given to every peer alike.
 */
export async function startBenchPostgres(log: (line: string) => void, statements = false, unixSocket = false): Promise<BenchPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-pg-"));
  trackDir(dir);
  const settings = statements ? { ...benchPostgresSettings, shared_preload_libraries: "pg_stat_statements" } : benchPostgresSettings;
  const cluster = await startCluster(dir, settings);
  // The cluster's start is shared test code: pin the postmaster's tree once it runs (later backends inherit it).
  await pinServerTree(postmasterPid(join(dir, "data")));
  const admin = new pg.Client({ connectionString: cluster.adminUrl });
  await admin.connect();
  try {
    await admin.query("CREATE DATABASE bench");
  } finally {
    await admin.end();
  }
  const url = unixSocket ? `postgres://postgres@/bench?host=${encodeURIComponent(dir)}&port=${cluster.port}` : `postgres://postgres@127.0.0.1:${cluster.port}/bench`;
  if (statements) {
    const bench = new pg.Client({ connectionString: url });
    await bench.connect();
    await bench.query("CREATE EXTENSION pg_stat_statements").finally(() => bench.end());
  }
  log(`postgres: cluster on port ${cluster.port}${unixSocket ? ", clients through its Unix socket" : ""} (${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(", ")})`);
  return { url, port: cluster.port, cpuSeconds: () => clusterCpuSeconds(join(dir, "data")), meter: () => startDatabaseMeter(url, join(dir, "data"), statements), stop: () => stopCluster(dir) };
}

function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n", 1)[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
