/** The shape of a bench run's results, shared by the report and the chart it draws. */
import type { PeerId, RowResult, Workload } from "./row.js";
import type { Pinning } from "./pinning.js";

export interface Ratio {
  /** e.g. "sluice/bullmq" */
  name: string;
  /** Throughput ratio (higher is better for the numerator). */
  msgsPerSec: number;
  /** Latency ratios (lower is better for the numerator). */
  p50: number;
  p99: number;
  pacedP50?: number;
  pacedP99?: number;
}

export interface ComparisonResult {
  id: string;
  title: string;
  baseline: PeerId;
  /** The row shown per peer: the best of the rounds. */
  rows: RowResult[];
  ratios: Ratio[];
  /** Every round of every peer, in the order run. */
  runs: RowResult[];
  /** This comparison's own workload line (else the SQS workload's). */
  workloadText?: string;
}

export interface BenchReport {
  schema: 1;
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; cpuModel: string; totalMemMiB: number; kernel: string; node: string };
  /** The code measured: HEAD, and whether the work tree had uncommitted changes. */
  git: { commit: string; dirty: boolean };
  workload: Workload;
  /** Servers and load generator on disjoint CPUs (--pin-server-cpus), when they were. */
  pinning?: Pinning;
  comparisons: ComparisonResult[];
}
