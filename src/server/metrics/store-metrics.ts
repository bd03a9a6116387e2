/** The SQLite store's group commits and WAL syncs: commit and fsync latency, commits, writes per commit. */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** fsync on these machines takes 0.1–100 ms; a commit's transaction far less. */
const latencyBuckets = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const writesBuckets = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

export interface StoreTelemetry {
  committed(commit: { seconds: number; writes: number }): void;
  synced(seconds: number): void;
  /** The store takes writes (1), or its disk is full (0). */
  writable(ok: boolean): void;
}

export function storeMetrics(registry: Registry): StoreTelemetry {
  const registers = [registry];
  const commits = new Counter({ name: "sluice_store_commits_total", help: "Transactions the SQLite store committed (each carries a group of writes).", registers });
  const commitSeconds = new Histogram({
    name: "sluice_store_commit_seconds",
    help: "Time a group commit's transaction took, BEGIN to COMMIT, on the event loop (the WAL's fsync is measured apart).",
    buckets: latencyBuckets,
    registers,
  });
  const writes = new Histogram({ name: "sluice_store_commit_writes", help: "Store writes (requests' operations) per commit: how well group commit shares each fsync.", buckets: writesBuckets, registers });
  const fsyncSeconds = new Histogram({ name: "sluice_store_fsync_seconds", help: "Time each fdatasync of the SQLite WAL took (every acknowledged write waits for one).", buckets: latencyBuckets, registers });
  const writable = new Gauge({ name: "sluice_store_writable", help: "1 while the store takes writes; 0 while its disk is full (writes answer 503 StorageFull).", registers });
  writable.set(1);
  return {
    writable: (ok) => writable.set(ok ? 1 : 0),
    committed(c) {
      commits.inc();
      commitSeconds.observe(c.seconds);
      writes.observe(c.writes);
    },
    synced: (seconds) => fsyncSeconds.observe(seconds),
  };
}
