/**
 * Runs the Sluice server as a child process on a fresh temp data dir, so the load generator and
 * the server are separate processes competing for the same 2 cores, as in real use. Durability is
 * the server's default (SQLite WAL, every acknowledgement after the WAL's fsync); the bench never weakens it.
 */
import { benchAccessKey, benchSigV4 } from "../sqs-client.js";
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeDir, trackDir } from "../cleanup.js";
import { serverCommand } from "../pinning.js";
import { processRssMiB, startChild, stopChild } from "../procs.js";

export interface SluiceServer {
  url: string;
  pid: number | undefined;
  /** The server's --data-dir (its SQLite files). */
  dataDir: string;
  /** The tail of what the server printed, for failure reports. */
  output(): string;
  rssMiB(): number | undefined;
  stop(): Promise<void>;
}

export interface SluiceServerOptions {
  /** The directory to run the server from: the repo, or a snapshot of one revision. */
  repoRoot: string;
  entry: "src" | "dist";
  cpuProfDir?: string;
  /** More `sluice serve` flags (the PostgreSQL rows: --store postgres --postgres-url …). */
  serveArgs?: string[];
}

const readyPattern = /Sluice listening on (http:\/\/[^\s"]+)/;

/** Directories this process has built: each is compiled once, at its first server. */
const built = new Set<string>();

/**
 * The package's own `npm run build` in `dir` (the work tree or a snapshot), once per process: the
 * server then runs as `npm start` runs it, from freshly compiled code — never from a stale dist/.
 */
function buildOnce(dir: string): void {
  if (built.has(dir)) return;
  execFileSync("npm", ["run", "--silent", "build"], { cwd: dir, stdio: "inherit" });
  built.add(dir);
}

export async function startSluiceServer(opts: SluiceServerOptions): Promise<SluiceServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "sluice-bench-data-"));
  trackDir(dataDir);
  // As `npm start` and the `sluice` bin run it: a 32 MiB young generation (V8's default is 16)
  // halves scavenges of the per-request garbage — measured 5–8 % more msgs/s.
  const nodeFlags: string[] = ["--max-semi-space-size=32"];
  if (opts.cpuProfDir !== undefined) nodeFlags.push("--cpu-prof", `--cpu-prof-dir=${opts.cpuProfDir}`);
  // For looking inside a row's server (--trace-gc, --trace-deopt, an --import that samples the heap).
  if (process.env.SLUICE_BENCH_SERVER_NODE_FLAGS) nodeFlags.push(...process.env.SLUICE_BENCH_SERVER_NODE_FLAGS.split(" "));
  // `node --import tsx` (not `npx tsx`) so the child's pid is the server itself: signals and
  // /proc CPU accounting reach the right process.
  let entryArgs: string[];
  if (opts.entry === "dist") {
    buildOnce(opts.repoRoot);
    entryArgs = [join(opts.repoRoot, "dist/cli/main.js")];
  } else {
    entryArgs = ["--import", "tsx", join(opts.repoRoot, "src/cli/main.ts")];
  }
  const args = [...nodeFlags, ...entryArgs, "serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir, ...(opts.serveArgs ?? [])];
  let started;
  try {
    started = await startChild(...serverCommand(process.execPath, args), readyPattern, 30_000, {
      cwd: opts.repoRoot,
      // No shutdown drain: nothing balances load onto a bench server (older revisions ignore it).
      env: { ...process.env, NODE_ENV: "production", SLUICE_SHUTDOWN_DRAIN_SECONDS: "0", ...(benchSigV4 ? { SLUICE_ACCESS_KEY_ID: benchAccessKey.accessKeyId, SLUICE_SECRET_ACCESS_KEY: benchAccessKey.secretAccessKey } : {}) },
    });
  } catch (err) {
    removeDir(dataDir);
    throw err;
  }
  const { child, match } = started;
  const url = match[1] ?? "";
  return {
    url,
    pid: child.pid,
    dataDir,
    output: () => started.output().slice(-4000),
    rssMiB: () => processRssMiB(child.pid),
    async stop() {
      // SIGINT lets the server close cleanly, which is also what makes --cpu-prof write its file.
      await stopChild(child, 15_000, "SIGINT");
      removeDir(dataDir);
    },
  };
}
