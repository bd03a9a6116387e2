/**
 * What `sluice serve` checks before it opens anything, so a mistake in its configuration ends the
 * start with one line that names it (exit 2) rather than a stack trace, a wrong label or a spin:
 * the data dir is a directory Sluice can write and fsync on a real filesystem, and the host
 * resolves to an address.
 */
import { lookup } from "node:dns/promises";
import { mkdir, open, stat, statfs, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { ConfigError } from "./config.js";

/** Pseudo-filesystems (statfs f_type) where a database can't live: writes there are not files. */
const pseudoFilesystems = new Map<number, string>([
  [0x9fa0, "proc"],
  [0x62656572, "sysfs"],
  [0x1cd1, "devpts"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x64626720, "debugfs"],
  [0x74726163, "tracefs"],
  [0x73636673, "securityfs"],
]);

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EROFS") return "the filesystem is read-only";
  if (code === "ENOSPC") return "no space left on the device";
  return code ?? (err instanceof Error ? err.message : String(err));
}

async function refusePseudoFilesystem(dir: string, at: string): Promise<void> {
  const fs = await statfs(at).catch(() => undefined);
  const pseudo = fs === undefined ? undefined : pseudoFilesystems.get(fs.type);
  if (pseudo !== undefined) throw new ConfigError(`--data-dir ${dir} is on the ${pseudo} pseudo-filesystem, which cannot hold a database; choose a directory on a disk.`);
}

/**
 * Creates the missing directories of `dir` one at a time, after checking the filesystem of the
 * deepest one that exists: node's recursive mkdir never returns for a path under /proc.
 */
async function makeDataDir(dir: string): Promise<void> {
  const missing: string[] = [];
  let at = resolve(dir);
  while ((await stat(at).catch(() => undefined)) === undefined) {
    missing.push(at);
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  await refusePseudoFilesystem(dir, at);
  for (const path of missing.reverse()) {
    await mkdir(path).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    });
  }
}

export async function checkDataDir(dir: string): Promise<void> {
  const existing = await stat(dir).catch(() => undefined);
  if (existing && !existing.isDirectory()) throw new ConfigError(`--data-dir ${dir} is a file, not a directory.`);
  try {
    await makeDataDir(dir);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR" || code === "EEXIST") throw new ConfigError(`--data-dir ${dir}: a part of that path is a file, not a directory.`);
    throw new ConfigError(`--data-dir ${dir} cannot be created: ${reason(err)}.`);
  }
  await refusePseudoFilesystem(dir, dir);
  // A file written and fsynced, as the database will be: permissions, read-only mounts, quotas.
  const probe = join(dir, `.sluice-write-check-${process.pid}`);
  try {
    const handle = await open(probe, "w");
    try {
      await handle.writeFile("sluice");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await unlink(probe);
  } catch (err) {
    await unlink(probe).catch(() => {});
    throw new ConfigError(`--data-dir ${dir} is not writable: ${reason(err)}.`);
  }
}

export async function checkHostResolves(host: string): Promise<void> {
  try {
    await lookup(host.replace(/^\[|\]$/g, ""));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`--host ${host} does not resolve to an address of this machine (${code ?? "lookup failed"}).`);
  }
}
