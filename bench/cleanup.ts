/**
 * One place that knows every child process and temp dir the bench created, so they are removed
 * even when a peer throws, the user presses Ctrl-C, or the bench crashes.
 */
import { rmSync } from "node:fs";
import type { ChildProcess } from "node:child_process";

const children = new Set<ChildProcess>();
/** Children started as leaders of their own process group: killed with their whole group. */
const groupLeaders = new WeakSet<ChildProcess>();
const dirs = new Set<string>();
let installed = false;

/** `group`: the child leads its own process group (spawned `detached`), so its descendants die with it. */
export function trackChild(child: ChildProcess, group = false): void {
  installHooks();
  children.add(child);
  if (group) groupLeaders.add(child);
  child.once("exit", () => children.delete(child));
}

export function trackDir(dir: string): void {
  installHooks();
  dirs.add(dir);
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

/** Synchronous last resort: SIGKILL whatever is still running, delete every temp dir. */
export function cleanupNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) killHard(child);
  }
  children.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

function installHooks(): void {
  if (installed) return;
  installed = true;
  process.once("exit", cleanupNow);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      cleanupNow();
      process.exit(130);
    });
  }
}

/** SIGKILL, to the whole process group when the child leads one. */
export function killHard(child: ChildProcess): void {
  if (groupLeaders.has(child) && child.pid !== undefined) {
    try {
      process.kill(-child.pid, "SIGKILL");
      return;
    } catch {
      // the group is gone already; fall through to the child itself
    }
  }
  child.kill("SIGKILL");
}
