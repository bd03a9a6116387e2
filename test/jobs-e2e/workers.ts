/**
 * Worker processes for the jobs end-to-end tests: `sluice worker <fixture>` spawned through the
 * real CLI, ready once it prints its "Sluice worker ready" line. `killAllWorkers()` (afterEach)
 * SIGKILLs any still running, and `assertNoWorkersLeft()` fails a test that left one behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { repoRoot } from "../support/cli.js";

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}

const running = new Set<ChildProcess>();

export const fixturesDir = join(repoRoot, "test/jobs-e2e/fixtures");

/**
 * `--conditions=sluice-source` makes `@sluice/client` resolve to the SDK's TypeScript source
 * (through tsx), so the tests exercise the code in this tree, not a stale client/dist.
 */
export const cliPrefix = ["--conditions=sluice-source", "--import", "tsx", "src/cli/main.ts"];

export function spawnCliCommand(args: string[], env: Record<string, string> = {}): WorkerProcess {
  const child = spawn(process.execPath, [...cliPrefix, ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  running.add(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, pid: child.pid!, exited, stdout: () => out, stderr: () => err };
}

/** Runs a CLI command to completion (bounded) and returns its output. */
export async function runCli(args: string[], timeoutMs = 30_000, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnCliCommand(args, env);
  const timer = setTimeout(() => p.child.kill("SIGKILL"), timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

export async function spawnWorker(opts: {
  url: string;
  module: string;
  queue: string;
  args?: string[];
  env?: Record<string, string>;
  readyTimeoutMs?: number;
}): Promise<WorkerProcess> {
  const p = spawnCliCommand(["worker", opts.module, "--queue", opts.queue, "--url", opts.url, ...(opts.args ?? [])], opts.env);
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker not ready within ${readyTimeoutMs} ms\nstdout: ${p.stdout()}\nstderr: ${p.stderr()}`)), readyTimeoutMs);
    const onData = (): void => {
      if (!p.stdout().includes("Sluice worker ready")) return;
      clearTimeout(timer);
      p.child.stdout!.off("data", onData);
      resolve();
    };
    p.child.stdout!.on("data", onData);
    onData();
    void p.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`worker exited before ready (code ${code}, signal ${signal})\nstdout: ${p.stdout()}\nstderr: ${p.stderr()}`));
    });
  });
  return p;
}

export async function killAllWorkers(): Promise<number> {
  const left = [...running];
  await Promise.all(
    left.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once("exit", () => resolve());
          c.kill("SIGKILL");
        }),
    ),
  );
  return left.length;
}

/** Reads a fixture's invocation log: one `<event> <jobId> <attempt> <pid>` line per event. */
export async function readLog(path: string): Promise<{ event: string; jobId: string; attempt: number; pid: number }[]> {
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => (err.code === "ENOENT" ? "" : Promise.reject(err)));
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [event, jobId, attempt, pid] = line.split(" ");
      return { event: event!, jobId: jobId!, attempt: Number(attempt), pid: Number(pid) };
    });
}
