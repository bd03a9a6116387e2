/**
 * vitest globalSetup: gives the run a directory for its PostgreSQL cluster (started lazily by the
 * first test file that needs it: test/support/postgres.ts), and stops and removes the cluster at
 * the end. Clusters left by runs that died (their process is gone) are removed first.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { stopCluster } from "./support/postgres-cluster.js";

const prefix = "sluice-pg-run-";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function removeRun(runDir: string): Promise<void> {
  if (existsSync(join(runDir, "cluster"))) await stopCluster(join(runDir, "cluster"));
  await rm(runDir, { recursive: true, force: true });
}

async function sweepDeadRuns(): Promise<void> {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(prefix))) {
    const runDir = join(tmpdir(), name);
    const owner = Number(existsSync(join(runDir, "owner.pid")) ? readFileSync(join(runDir, "owner.pid"), "utf8") : Number.NaN);
    if (Number.isInteger(owner) && !alive(owner)) await removeRun(runDir);
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await sweepDeadRuns();
  const runDir = await mkdtemp(join(tmpdir(), prefix));
  // The cluster's server user (postgres, when tests run as root) must reach its directory inside.
  await chmod(runDir, 0o755);
  await writeFile(join(runDir, "owner.pid"), String(process.pid));
  project.provide("postgresRunDir", runDir);
  return () => removeRun(runDir);
}
