/**
 * What a benchmark row is. A comparison groups rows that run the same workload against different
 * peers (one after the other, never concurrently); the report prints each comparison as one table
 * with ratios against its baseline. To add a row (e.g. Sluice FIFO with many message groups, or
 * jobs submit → worker → complete beside BullMQ Queue.add → Worker), implement `Row` in
 * bench/peers/ and list it in bench/comparisons.ts.
 */
import type { BurstResult } from "./burst.js";
import type { StreamResult } from "./stream-result.js";
import type { PhaseResult } from "./phase.js";
import type { TimeSplit } from "./time-split.js";

export const peerIds = ["sluice", "bullmq", "pgboss", "rabbitmq"] as const;
export type PeerId = (typeof peerIds)[number];

/** The load every row of a comparison is given (same counts, same sizes). */
export interface Workload {
  messages: number;
  warmupMessages: number;
  bodyBytes: number;
  batchSize: number;
  producers: number;
  consumers: number;
  /** The jobs comparison: closed-loop clients, each with one job in flight. */
  jobClients: number;
  /** Closed loop: messages sent but not yet done before producers pause. */
  backlogMax: number;
  /** Long-poll wait for SQS-style consumers. */
  waitTimeSeconds: number;
  /** Second, open-loop phase: latency at a fixed, moderate rate every peer can sustain. */
  pacedRatePerSec: number;
  pacedMessages: number;
  phaseTimeoutMs: number;
  /** The burst comparison: messages sent with no consumer, the idle spell after, drain consumers. */
  burstMessages: number;
  burstIdleSeconds: number;
  burstConsumers: number;
  /** The stream comparison: jobs streaming at once, chunks a second each emits, for how long. */
  streamJobs: number;
  streamRatePerSec: number;
  streamSeconds: number;
  /** Seconds of the same stream run first, not measured (the load generator's and server's cold start). */
  streamWarmupSeconds: number;
}

export interface RowContext {
  repoRoot: string;
  workload: Workload;
  log(line: string): void;
  /** When set, the Sluice server runs with --cpu-prof into this directory. */
  cpuProfDir?: string;
  /** Which Sluice entry point to run: the TypeScript source via tsx, or the compiled dist/. */
  serverEntry: "src" | "dist";
  /** Run the Sluice server from a clean snapshot of this git revision instead of the work tree. */
  serverRev?: string;
  /** Run the Sluice server from this directory (another checkout) instead of the repo. */
  serverDir?: string;
  /** PostgreSQL rows: list the statements the database ran (pg_stat_statements). */
  pgStats?: boolean;
  /** Sluice-on-PostgreSQL rows: each node's connection pool, instead of the sizing rule. */
  pgPoolSize?: number;
  /** PostgreSQL rows: every peer connects through the cluster's Unix socket, not TCP. */
  pgUnixSocket?: boolean;
  /** Sluice rows: split the server's saturated-phase CPU profile by area (needs cpuProfDir). */
  timeSplit?: boolean;
}

/** CPU used while the saturated phase ran, in % of one core (100 = one core busy all along). */
export interface CpuUse {
  serverCorePct?: number;
  loadGenCorePct: number;
  /** Everything else on the machine meanwhile: other people's builds and tests skew the row. */
  otherCorePct?: number;
}

export interface RowResult {
  peer: PeerId;
  label: string;
  durability: string;
  version?: string;
  saturated: PhaseResult;
  paced?: PhaseResult;
  cpu: CpuUse;
  serverRssMiB?: number;
  /** 1-minute load average before and after the row: other work on the box shows up here. */
  loadAvg1m?: { before: number; after: number };
  /** The burst comparison's figures (bench/burst.ts). */
  burst?: BurstResult;
  /** The stream comparison's figures (bench/peers/sluice-stream.ts). */
  stream?: StreamResult;
  /** Sluice rows with --time-split: where the server's main thread spent the saturated phase. */
  timeSplit?: TimeSplit;
  /** Which round of `--repeat` this was (1-based). */
  round?: number;
  notes: string[];
}

export interface Row {
  peer: PeerId;
  label: string;
  run(ctx: RowContext): Promise<RowResult>;
}

export interface Comparison {
  id: string;
  title: string;
  rows: Row[];
  /** Ratios are "other row / this peer's row" (throughput) — the peer to beat. */
  baseline: PeerId;
  /** More peers to compare against: each other row (not the baseline's) also gets a ratio to these. */
  alsoAgainst?: PeerId[];
  /** Left out of a plain run: runs only when `--compare` names it (the burst takes minutes per peer). */
  onlyWhenNamed?: boolean;
  /** The workload line under the title, when this comparison doesn't run the SQS workload as is. */
  describeWorkload?: (w: Workload) => string;
}
