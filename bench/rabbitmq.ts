/**
 * A private RabbitMQ for the RabbitMQ rows: Debian's `rabbitmq-server`, installed if missing,
 * started in the foreground from a temp dir with its own node name, ports, Erlang cookie (HOME),
 * config and its own `epmd` on a free port — so it never meets a system instance. Loopback only.
 * Durability is the quorum queue's: a publisher confirm comes after Raft's WAL is fsynced.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureAptPackage } from "./apt.js";
import { removeDir, trackDir } from "./cleanup.js";
import { serverCommand } from "./pinning.js";
import { freePort, processTreeCpuSeconds, processTreeRssMiB, runCommand, startChild, stopChild } from "./procs.js";
import type { Started } from "./procs.js";

const serverScript = "/usr/lib/rabbitmq/bin/rabbitmq-server";

export interface RabbitServer {
  url: string;
  /** The rabbitmq-server script, parent of beam.smp (the broker) and its helpers. */
  pid: number | undefined;
  version: string;
  /** Where the node keeps its queues (Raft logs and segments), for disk use per message. */
  dataDir: string;
  /** CPU seconds of the broker's process tree so far. */
  cpuSeconds(): number | undefined;
  rssMiB(): number | undefined;
  output(): string;
  stop(): Promise<void>;
}

export async function ensureRabbitInstalled(log: (line: string) => void): Promise<void> {
  await ensureAptPackage("rabbitmq-server", () => existsSync(serverScript), log);
}

export async function startRabbit(log: (line: string) => void): Promise<RabbitServer> {
  await ensureRabbitInstalled(log);
  const version = `rabbitmq-server ${(await runCommand("dpkg-query", ["-W", "-f", "${Version}", "rabbitmq-server"])).output.trim()}`;
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-rabbitmq-"));
  trackDir(dir);
  const [port, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  const dataDir = join(dir, "mnesia");
  mkdirSync(dataDir);
  mkdirSync(join(dir, "log"));
  writeFileSync(join(dir, "rabbitmq.conf"), `listeners.tcp.default = 127.0.0.1:${port}\n`);
  writeFileSync(join(dir, "enabled_plugins"), "[].\n");
  writeFileSync(join(dir, "rabbitmq-env.conf"), "");
  const env = {
    ...process.env,
    HOME: dir,
    ERL_EPMD_PORT: String(epmdPort),
    RABBITMQ_CONF_ENV_FILE: join(dir, "rabbitmq-env.conf"),
    RABBITMQ_CONFIG_FILE: join(dir, "rabbitmq.conf"),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, "enabled_plugins"),
    RABBITMQ_MNESIA_BASE: dataDir,
    RABBITMQ_LOG_BASE: join(dir, "log"),
    RABBITMQ_LOGS: "-",
    RABBITMQ_PID_FILE: join(dir, "rabbitmq.pid"),
    RABBITMQ_NODENAME: `sluicebench${port}@localhost`,
    RABBITMQ_DIST_PORT: String(distPort),
  };
  let epmd: Started | undefined;
  let started: Started;
  try {
    // epmd in the foreground, as our child: Erlang would otherwise start a daemon that outlives the bench.
    epmd = await startEpmd(epmdPort, env);
    const [cmd, args] = serverCommand(serverScript, []);
    // Its own process group: the script runs beam.smp as a child, which a hard kill must reach too.
    started = await startChild(cmd, args, /Server startup complete/, 90_000, { cwd: dir, env, detached: true });
  } catch (err) {
    if (epmd !== undefined) await stopChild(epmd.child, 2_000);
    removeDir(dir);
    throw err;
  }
  const { child } = started;
  const epmdChild = epmd.child;
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    pid: child.pid,
    version,
    dataDir,
    cpuSeconds: () => processTreeCpuSeconds(child.pid),
    rssMiB: () => processTreeRssMiB(child.pid),
    output: () => started.output().slice(-4000),
    async stop() {
      await stopChild(child, 30_000);
      await stopChild(epmdChild, 2_000);
      removeDir(dir);
    },
  };
}

async function startEpmd(port: number, env: NodeJS.ProcessEnv): Promise<Started> {
  // epmd prints nothing when it starts: -d makes it say so.
  return await startChild("epmd", ["-port", String(port), "-d"], /epmd running/, 10_000, { env });
}
