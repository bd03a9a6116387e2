/**
 * A private PostgreSQL for the PostgreSQL rows: the machine's PostgreSQL 15, a fresh cluster per
 * row, with the defaults that make a commit durable — fsync on, synchronous_commit on,
 * full_page_writes on — the same for Sluice and pg-boss. Removed when the row ends.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startCluster, stopCluster } from "../test/support/postgres-cluster.js";
import { trackDir } from "./cleanup.js";

export const benchPostgresSettings: Readonly<Record<string, string>> = {
  fsync: "on",
  synchronous_commit: "on",
  full_page_writes: "on",
  max_connections: "200",
  shared_buffers: "256MB",
};

export const benchPostgresDurability = "PostgreSQL 15, fsync on, synchronous_commit on (every commit flushed to the WAL before it is acknowledged)";

export interface BenchPostgres {
  /** A connection string to a database made for the row. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

export async function startBenchPostgres(log: (line: string) => void): Promise<BenchPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-pg-"));
  trackDir(dir);
  const cluster = await startCluster(dir, benchPostgresSettings);
  const admin = new pg.Client({ connectionString: cluster.adminUrl });
  await admin.connect();
  try {
    await admin.query("CREATE DATABASE bench");
  } finally {
    await admin.end();
  }
  log(`postgres: cluster on port ${cluster.port} (${Object.entries(benchPostgresSettings).map(([k, v]) => `${k}=${v}`).join(", ")})`);
  return { url: `postgres://postgres@127.0.0.1:${cluster.port}/bench`, port: cluster.port, stop: () => stopCluster(dir) };
}
