/**
 * A throwaway PostgreSQL cluster from the machine's own binaries (Debian's `postgresql` package):
 * initdb into a directory, pg_ctl start on a free loopback port, stop and remove. As root (CI),
 * the server runs as the `postgres` user, which initdb requires. Used by the test setup
 * (test/support/postgres.ts) and by the benchmark (bench/postgres.ts).
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PostgresCluster {
  dir: string;
  port: number;
  /** A superuser connection string to the `postgres` database (trust auth, loopback only). */
  adminUrl: string;
}

/** The fix for a machine without the binaries, named in every error about them. */
export const installHint = "apt-get install -y postgresql (Debian 12 ships PostgreSQL 15)";

/** SLUICE_PG_BIN, else PostgreSQL 15's directory, else the newest version installed. */
export function postgresBinDir(): string {
  const fromEnv = process.env.SLUICE_PG_BIN;
  if (fromEnv) return fromEnv;
  const preferred = "/usr/lib/postgresql/15/bin";
  if (existsSync(join(preferred, "initdb"))) return preferred;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error(`PostgreSQL server binaries not found (looked in ${preferred} and ${root}/*/bin; set SLUICE_PG_BIN to use others). Install them: ${installHint}`);
  return join(root, newest, "bin");
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** initdb refuses to run as root: run the server's tools as `postgres` then. */
async function asServerUser(binary: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const isRoot = process.getuid?.() === 0;
  const [file, argv] = isRoot ? ["runuser", ["-u", "postgres", "--", binary, ...args]] : [binary, args];
  return run(file, argv, { maxBuffer: 16 * 1024 * 1024 });
}

async function postgresIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const { stdout: uid } = await run("id", ["-u", "postgres"]);
  const { stdout: gid } = await run("id", ["-g", "postgres"]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/**
 * Settings for tests: fsync off (a test never crashes the database itself, only Sluice nodes, so
 * what reached PostgreSQL stays there) and room for many pools. The benchmark passes fsync on.
 */
export const testSettings: Readonly<Record<string, string>> = {
  fsync: "off",
  full_page_writes: "off",
  max_connections: "300",
};

/** The postgres server's command-line options: loopback only, its socket in the cluster's directory. */
function serverOptions(dir: string, port: number, settings: Readonly<Record<string, string>>): string {
  return [`-p ${port}`, ...Object.entries({ listen_addresses: "127.0.0.1", unix_socket_directories: dir, ...settings }).map(([k, v]) => `-c ${k}=${v}`)].join(" ");
}

/**
 * Creates and starts a cluster in `dir` (made if missing; must be empty). Fails with the reason
 * and the server's log when it can't start.
 */
export async function startCluster(dir: string, settings: Readonly<Record<string, string>> = testSettings): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  await mkdir(data, { recursive: true });
  // The server user must reach the directory, own its data dir and write its log and socket.
  await chmod(dir, 0o755);
  await chmod(data, 0o700);
  await writeFile(log, "");
  const ids = await postgresIds();
  if (ids) {
    await chown(data, ids.uid, ids.gid);
    await chown(log, ids.uid, ids.gid);
    await chown(dir, ids.uid, ids.gid);
  }
  await asServerUser(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"]).catch((err: unknown) => {
    throw new Error(`initdb failed: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  });
  // A port can be taken between the probe and the bind: try a few.
  let lastError = "";
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      await asServerUser(join(bin, "pg_ctl"), ["-D", data, "-l", log, "-w", "-t", "60", "-o", serverOptions(dir, port, settings), "start"]);
      return { dir, port, adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres` };
    } catch (err) {
      lastError = (err as { stderr?: string }).stderr ?? String(err);
    }
  }
  const serverLog = await readFile(log, "utf8").catch(() => "");
  throw new Error(`pg_ctl start failed: ${lastError}\n${serverLog}`);
}

/** Stops the server, keeping its data: a database outage, for tests of what clients see meanwhile. */
export async function pauseCluster(c: PostgresCluster): Promise<void> {
  await asServerUser(join(postgresBinDir(), "pg_ctl"), ["-D", join(c.dir, "data"), "-m", "fast", "-w", "stop"]);
}

/** Starts a paused cluster again, on its port. */
export async function resumeCluster(c: PostgresCluster, settings: Readonly<Record<string, string>> = testSettings): Promise<void> {
  await asServerUser(join(postgresBinDir(), "pg_ctl"), ["-D", join(c.dir, "data"), "-l", join(c.dir, "server.log"), "-w", "-t", "60", "-o", serverOptions(c.dir, c.port, settings), "start"]);
}

/** Stops the cluster at once (nothing in it is kept) and removes `dir`. */
export async function stopCluster(dir: string): Promise<void> {
  const data = join(dir, "data");
  if (existsSync(join(data, "postmaster.pid"))) {
    await asServerUser(join(postgresBinDir(), "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
  }
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}
