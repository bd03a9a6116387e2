/**
 * A private, durable Redis for the BullMQ peer: installed from the distro if missing, started on
 * a random free port with its own temp dir, AOF on and fsynced on every write (`appendfsync
 * always`, Redis's only setting where an acknowledged write survives a power loss), RDB snapshots
 * off so none runs mid-measurement. Always loopback-only.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAptPackage } from "./apt.js";
import { serverCommand } from "./pinning.js";
import { removeDir, trackDir } from "./cleanup.js";
import { freePort, onPath, runCommand, startChild, stopChild } from "./procs.js";
import type { Started } from "./procs.js";

export interface RedisServer {
  host: string;
  port: number;
  pid: number | undefined;
  version: string;
  /** Where Redis keeps its AOF. */
  dataDir: string;
  stop(): Promise<void>;
}

export async function ensureRedisInstalled(log: (line: string) => void): Promise<void> {
  await ensureAptPackage("redis-server", () => onPath("redis-server"), log);
}

/**
 * BullMQ loads `ioredis` lazily as an optional peer dependency. If the project's devDependencies
 * don't bring it, install it without touching package.json so `npm run bench` still just works.
 */
export async function ensureIoredisResolvable(repoRoot: string, log: (line: string) => void): Promise<void> {
  // Checked in a child process: a failed require.resolve here would be remembered by this
  // process's module resolution, and BullMQ's later require("ioredis") would fail even after
  // the install below.
  const probe = `require.resolve("ioredis", { paths: [require("node:path").dirname(require.resolve("bullmq"))] })`;
  if ((await runCommand(process.execPath, ["-e", probe], { cwd: repoRoot })).code === 0) return;
  log("ioredis (BullMQ's Redis driver) is not installed: npm install --no-save ioredis@5 …");
  const res = await runCommand("npm", ["install", "--no-save", "--no-audit", "--no-fund", "ioredis@5"], { cwd: repoRoot });
  if (res.code !== 0) throw new Error(`npm install ioredis failed:\n${res.output.slice(-2000)}`);
}

export async function startRedis(log: (line: string) => void): Promise<RedisServer> {
  await ensureRedisInstalled(log);
  const version = (await runCommand("redis-server", ["--version"])).output.trim();
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-redis-"));
  trackDir(dir);
  const port = await freePort();
  let started: Started;
  try {
    started = await startChild(
      ...serverCommand("redis-server", [
        "--port", String(port),
        "--bind", "127.0.0.1",
        "--dir", dir,
        "--appendonly", "yes",
        "--appendfsync", "always",
        "--save", "",
        "--daemonize", "no",
        "--logfile", "",
      ]),
      /Ready to accept connections/,
      15_000,
    );
  } catch (err) {
    removeDir(dir);
    throw err;
  }
  const { child } = started;
  return {
    host: "127.0.0.1",
    port,
    pid: child.pid,
    version,
    dataDir: dir,
    async stop() {
      await stopChild(child, 10_000);
      removeDir(dir);
    },
  };
}
