/**
 * A throwaway PgBouncer (Debian's `pgbouncer` package) in front of the test cluster, in
 * transaction pooling mode: started on a free loopback port, stopped with SIGTERM. As root (CI)
 * it runs as the `postgres` user: PgBouncer refuses to run as root.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chown, mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./postgres-cluster.js";

const binary = "/usr/sbin/pgbouncer";

export interface PgBouncer {
  port: number;
  stop(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** PgBouncer for every database of the cluster on `postgresPort`, `poolSize` server connections per database. */
export async function startPgBouncer(opts: { postgresPort: number; poolSize: number }): Promise<PgBouncer> {
  if (!existsSync(binary)) throw new Error(`${binary} not found. Install it: apt-get install -y pgbouncer`);
  const dir = await mkdtemp(join(tmpdir(), "sluice-pgbouncer-"));
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  await writeFile(join(dir, "users.txt"), '"postgres" ""\n');
  await writeFile(
    ini,
    [
      "[databases]",
      `* = host=127.0.0.1 port=${opts.postgresPort}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "admin_users = postgres",
      "pool_mode = transaction",
      `default_pool_size = ${opts.poolSize}`,
      "max_client_conn = 200",
      "ignore_startup_parameters = extra_float_digits",
      "",
    ].join("\n"),
  );
  const root = process.getuid?.() === 0;
  const ids = root ? { uid: Number(execFileSync("id", ["-u", "postgres"]).toString()), gid: Number(execFileSync("id", ["-g", "postgres"]).toString()) } : undefined;
  if (ids) for (const f of [dir, ini, join(dir, "users.txt")]) await chown(f, ids.uid, ids.gid);
  const child: ChildProcess = spawn(binary, [ini], { stdio: ["ignore", "ignore", "pipe"], ...ids });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const deadline = Date.now() + 30_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`PgBouncer did not start on port ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
