/** Command-line flags of `npm run bench -- …`. */
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { type Pinning, pinningFrom } from "./pinning.js";
import { peerIds } from "./row.js";
import type { PeerId, Workload } from "./row.js";

export interface BenchArgs {
  workload: Workload;
  only?: PeerId;
  /** Run only these comparisons (ids from bench/comparisons.ts). */
  compare?: string[];
  cpuProfDir?: string;
  serverEntry: "src" | "dist";
  serverRev?: string;
  serverDir?: string;
  /** Each Sluice row also runs from a clean snapshot of this revision, alternating with the work tree's. */
  baselineRev?: string;
  write: boolean;
  /** Before each row, wait up to this many seconds for the rest of the machine to go quiet. */
  waitQuietS: number;
  /** Rounds per comparison (peers alternate); the table shows each peer's best round. */
  repeat: number;
  /** PostgreSQL rows: list the statements run per 10 messages. */
  pgStats: boolean;
  /** Sluice-on-PostgreSQL rows: each node's --postgres-pool-size. */
  pgPoolSize?: number;
  /** PostgreSQL rows: every peer through the cluster's Unix socket. */
  pgUnixSocket: boolean;
  /** Sluice rows: print where the server's time goes, from a CPU profile of the saturated phase. */
  timeSplit: boolean;
  /** --pin-server-cpus / --pin-loadgen-cpus: servers and the load generator on disjoint CPUs. */
  pinning?: Pinning;
}

export const usage = `npm run bench -- [options]
  --messages N        messages per peer in the measured phase (default 100000)
  --only PEER         sluice | bullmq | pgboss | rabbitmq
  --compare IDS       only these comparisons, comma-separated (durable-standard-batch10, jobs,
                      jobs-limits, fifo-groups, postgres, burst, stream — burst and stream run
                      only when named)
  --producers N       concurrent producers (default 32)
  --consumers N       concurrent SQS consumers (default 64; BullMQ uses one Worker, concurrency 100)
  --job-clients N     jobs comparison: closed-loop clients, one job in flight each (default 64)
  --backlog N         closed loop: max messages sent but not yet done (default 4000)
  --warmup N          warm-up messages per peer, not measured (default 5000)
  --rate N            paced phase: fixed send rate, msgs/s (default 1000)
  --paced-messages N  paced phase size, 0 to skip (default 5000)
  --wait S            ReceiveMessage WaitTimeSeconds (default 2)
  --burst-messages N  burst: messages sent with no consumer before the drain (default 1000000)
  --burst-idle S      burst: seconds idle with the full backlog before the drain (default 10)
  --burst-consumers N burst: consumers draining the backlog (default 16)
  --stream-jobs N     stream: jobs streaming at once, each to its own client (default 50)
  --stream-rate N     stream: chunks a second each job's worker emits (default 1000)
  --stream-seconds S  stream: how long each job emits (default 10; 1 for a short run)
  --stream-warmup S   stream: seconds of the same stream first, not measured (default 1; 0: none)
  --cpu-prof DIR      run the Sluice server with --cpu-prof into DIR
  --time-split        Sluice rows: print the server's main-thread time per message by area
                      (HTTP, protocol, core, store, fsync wait, metrics/logging, GC, other) from a
                      CPU profile of the saturated phase (profiling costs the server a little)
  --server-entry E    dist (default: compiled first, as npm start runs it) | src (tsx)
  --server-rev REV    run the server from a clean snapshot of git revision REV (e.g. HEAD)
                      instead of the work tree (which may hold someone's half-done edit)
  --baseline-rev REV  also run every Sluice row from a clean snapshot of REV, just before the
                      row it mirrors (alternating with --repeat): before/after in one run
  --server-dir DIR    run the server from another checkout (A/B experiments on a patched copy;
                      it needs its own node_modules, or a symlink to this one's)
  --wait-quiet S      before each row, wait up to S s until other processes use < 15% of a core
                      (default 60; 0 to start at once) — the machines are shared
  --repeat N          rounds per comparison, peers alternating; shows each peer's best (default 1)
  --pg-stats          PostgreSQL rows: also load pg_stat_statements and log the statements run
                      per 10 messages (the database's CPU, write transactions and WAL are always logged)
  --pg-pool-size N    Sluice on PostgreSQL: each node's --postgres-pool-size (default: the
                      node's own default)
  --pg-unix-socket    PostgreSQL rows: every peer (Sluice and pg-boss) connects through the
                      cluster's Unix socket instead of TCP on loopback (an extra measurement)
  --pin-server-cpus L start every server (Sluice, Redis, RabbitMQ, PostgreSQL) under taskset -c L
                      (a CPU list: 0, 0-1, 0,2) and pin the load generator to the other CPUs
  --pin-loadgen-cpus L the load generator's CPUs instead of "all the others" (must not overlap)
  --no-write          don't write bench/results/`;

function isPeerId(s: string): s is PeerId {
  return (peerIds as readonly string[]).includes(s);
}

function positiveInt(name: string, v: string | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${v}`);
  return n;
}

/** `cpuCount`: the machine's CPUs, which the pinning flags are checked against. */
export function parseBenchArgs(argv: string[], cpuCount = cpus().length): BenchArgs | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      messages: { type: "string" },
      only: { type: "string" },
      compare: { type: "string" },
      producers: { type: "string" },
      consumers: { type: "string" },
      "job-clients": { type: "string" },
      backlog: { type: "string" },
      warmup: { type: "string" },
      rate: { type: "string" },
      "paced-messages": { type: "string" },
      wait: { type: "string" },
      "cpu-prof": { type: "string" },
      "time-split": { type: "boolean" },
      "burst-messages": { type: "string" },
      "burst-idle": { type: "string" },
      "burst-consumers": { type: "string" },
      "stream-jobs": { type: "string" },
      "stream-rate": { type: "string" },
      "stream-seconds": { type: "string" },
      "stream-warmup": { type: "string" },
      "server-entry": { type: "string" },
      "server-rev": { type: "string" },
      "server-dir": { type: "string" },
      "baseline-rev": { type: "string" },
      "no-write": { type: "boolean" },
      "wait-quiet": { type: "string" },
      repeat: { type: "string" },
      "pg-stats": { type: "boolean" },
      "pg-pool-size": { type: "string" },
      "pg-unix-socket": { type: "boolean" },
      "pin-server-cpus": { type: "string" },
      "pin-loadgen-cpus": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  });
  if (values.help === true) return "help";
  const batchSize = 10;
  const workload: Workload = {
    messages: positiveInt("messages", values.messages, 100_000),
    warmupMessages: positiveInt("warmup", values.warmup, 5_000, 0),
    bodyBytes: 1024,
    batchSize,
    producers: positiveInt("producers", values.producers, 32),
    consumers: positiveInt("consumers", values.consumers, 64),
    jobClients: positiveInt("job-clients", values["job-clients"], 64),
    backlogMax: positiveInt("backlog", values.backlog, 4_000, batchSize),
    waitTimeSeconds: positiveInt("wait", values.wait, 2, 1),
    pacedRatePerSec: positiveInt("rate", values.rate, 1_000),
    pacedMessages: positiveInt("paced-messages", values["paced-messages"], 5_000, 0),
    phaseTimeoutMs: 180_000,
    burstMessages: positiveInt("burst-messages", values["burst-messages"], 1_000_000, batchSize),
    burstIdleSeconds: positiveInt("burst-idle", values["burst-idle"], 10, 1),
    burstConsumers: positiveInt("burst-consumers", values["burst-consumers"], 16),
    streamJobs: positiveInt("stream-jobs", values["stream-jobs"], 50),
    streamRatePerSec: positiveInt("stream-rate", values["stream-rate"], 1_000),
    streamSeconds: positiveInt("stream-seconds", values["stream-seconds"], 10),
    streamWarmupSeconds: positiveInt("stream-warmup", values["stream-warmup"], 1, 0),
  };
  if (values.only !== undefined && !isPeerId(values.only)) throw new Error(`--only must be one of ${peerIds.join(", ")}; got ${values.only}`);
  const entry = values["server-entry"] ?? "dist";
  if (entry !== "src" && entry !== "dist") throw new Error(`--server-entry must be src or dist, got ${entry}`);
  const args: BenchArgs = { workload, serverEntry: entry, write: values["no-write"] !== true, waitQuietS: positiveInt("wait-quiet", values["wait-quiet"], 60, 0), repeat: positiveInt("repeat", values.repeat, 1), pgStats: values["pg-stats"] === true, pgUnixSocket: values["pg-unix-socket"] === true, timeSplit: values["time-split"] === true };
  if (values.only !== undefined) args.only = values.only;
  if (values.compare !== undefined) args.compare = values.compare.split(",").map((id) => id.trim());
  if (values["cpu-prof"] !== undefined) args.cpuProfDir = values["cpu-prof"];
  if (values["server-rev"] !== undefined) {
    args.serverRev = values["server-rev"];
  }
  if (values["server-dir"] !== undefined) {
    if (args.serverRev !== undefined) throw new Error("--server-dir and --server-rev exclude each other");
    args.serverDir = values["server-dir"];
  }
  if (values["baseline-rev"] !== undefined) args.baselineRev = values["baseline-rev"];
  if (values["pg-pool-size"] !== undefined) args.pgPoolSize = positiveInt("pg-pool-size", values["pg-pool-size"], 0);
  const pinning = pinningFrom(values["pin-server-cpus"], values["pin-loadgen-cpus"], cpuCount);
  if (pinning !== undefined) args.pinning = pinning;
  return args;
}
