/** Child-process helpers: free ports, waiting for a readiness line, graceful stop, CPU time. */
import { spawn } from "node:child_process";
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { accessSync, appendFileSync, constants, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { killHard, trackChild } from "./cleanup.js";

export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface Started {
  child: ChildProcess;
  /** The first regex match of the readiness pattern on stdout/stderr. */
  match: RegExpMatchArray;
  /** Everything the child printed so far (bounded), for error messages. */
  output(): string;
}

const outputKeepChars = 64_000;

/**
 * Spawns `cmd` and resolves once a line matching `ready` appears on stdout or stderr.
 * Rejects if the child exits first or `timeoutMs` passes (and kills it then).
 */
export async function startChild(cmd: string, args: string[], ready: RegExp, timeoutMs: number, opts: SpawnOptions = {}): Promise<Started> {
  const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
  trackChild(child, opts.detached === true);
  let out = "";
  const append = (chunk: Buffer): void => {
    // Everything a child prints, appended to this file (the output kept here is only a tail, for errors).
    if (process.env.SLUICE_BENCH_CHILD_LOG) appendFileSync(process.env.SLUICE_BENCH_CHILD_LOG, chunk);
    out += chunk.toString("utf8");
    if (out.length > outputKeepChars) out = out.slice(-outputKeepChars);
  };
  return await new Promise<Started>((resolve, reject) => {
    const timer = setTimeout(() => {
      killHard(child);
      reject(new Error(`${cmd} not ready after ${timeoutMs} ms; output:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      append(chunk);
      const match = ready.exec(out);
      if (match !== null) {
        clearTimeout(timer);
        child.off("exit", onExit);
        // Keep draining the pipes so a chatty child never blocks on a full pipe buffer.
        child.stdout?.off("data", onData).on("data", append);
        child.stderr?.off("data", onData).on("data", append);
        resolve({ child, match, output: () => out });
      }
    };
    const onExit = (code: number | null, signal: string | null): void => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (code ${code}, signal ${signal}) before it was ready; output:\n${out}`));
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

/** SIGTERM (or `signal`), then SIGKILL after `graceMs`. Resolves when the child has exited. */
export async function stopChild(child: ChildProcess, graceMs = 10_000, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => killHard(child), graceMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/** Runs a command to completion; resolves with its exit code and output (never rejects on a non-zero code). */
export async function runCommand(cmd: string, args: string[], opts: SpawnOptions = {}): Promise<{ code: number; output: string }> {
  return await new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] });
    trackChild(child);
    let out = "";
    const append = (chunk: Buffer): void => {
      out += chunk.toString("utf8");
      if (out.length > outputKeepChars) out = out.slice(-outputKeepChars);
    };
    child.stdout?.on("data", append);
    child.stderr?.on("data", append);
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code: code ?? 1, output: out }));
  });
}

/** Linux clock ticks per second for /proc/<pid>/stat; 100 on every mainstream kernel config. */
const clockTicksPerSecond = 100;

/** User + system CPU seconds a process has used so far, from /proc (undefined off Linux). */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces; fields after its closing paren are fixed.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return (utime + stime) / clockTicksPerSecond;
  } catch {
    return undefined;
  }
}

/** User + system CPU seconds of a process's main thread (the event loop, for Node) so far. */
export function mainThreadCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
  } catch {
    return undefined;
  }
}

/**
 * Nanoseconds on a CPU of all a process's live threads so far (their schedstat), for meters whose
 * spans are too short for /proc's 10 ms ticks; threads that have ended are not counted.
 */
export function processCpuNanos(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    return ns;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in MiB, from /proc (undefined off Linux). */
export function processRssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m?.[1] === undefined ? undefined : Number(m[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** Looks a command up on PATH without running it. */
export function onPath(cmd: string): boolean {
  const dirs = (process.env["PATH"] ?? "").split(":").filter((d) => d !== "");
  for (const dir of dirs) {
    try {
      accessSync(`${dir}/${cmd}`, constants.X_OK);
      return true;
    } catch {
      // not in this dir
    }
  }
  return false;
}

/** The pids of `root` and every live descendant, from the parent links in /proc (Linux only). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [root];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // exited meanwhile
    }
  }
  const tree: number[] = [];
  const todo = [root];
  for (let pid = todo.pop(); pid !== undefined; pid = todo.pop()) {
    tree.push(pid);
    todo.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/**
 * CPU seconds of a process tree (a server that forks helpers, e.g. beam.smp's erl_child_setup):
 * each live member's own time plus that of the children it has reaped.
 */
export function processTreeCpuSeconds(root: number | undefined): number | undefined {
  if (root === undefined) return undefined;
  let ticks = 0;
  let found = false;
  for (const pid of processTree(root)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      found = true;
    } catch {
      // exited meanwhile
    }
  }
  return found ? ticks / clockTicksPerSecond : undefined;
}

/** Resident set size of a process tree in MiB (undefined off Linux). */
export function processTreeRssMiB(root: number | undefined): number | undefined {
  if (root === undefined) return undefined;
  let total: number | undefined;
  for (const pid of processTree(root)) {
    const rss = processRssMiB(pid);
    if (rss !== undefined) total = (total ?? 0) + rss;
  }
  return total;
}
