/**
 * `--pin-server-cpus` / `--pin-loadgen-cpus`: every server the bench starts (Sluice, Redis,
 * RabbitMQ, PostgreSQL) runs under `taskset -c` on the server CPUs and the bench process on the
 * others, so peers compare per core instead of fighting the load generator for the same ones.
 */
import { processTree, runCommand } from "./procs.js";

export interface Pinning {
  /** taskset CPU lists, e.g. "0" or "0-1,3". */
  serverCpus: string;
  loadGenCpus: string;
}

let pinning: Pinning | undefined;

export function setPinning(p: Pinning | undefined): void {
  pinning = p;
}

export function currentPinning(): Pinning | undefined {
  return pinning;
}

/** Parses a taskset CPU list ("0", "1-3", "0,2-3") into sorted CPU numbers; throws on anything else. */
export function parseCpuList(flag: string, list: string, cpuCount: number): number[] {
  const cpus = new Set<number>();
  for (const part of list.split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (m === null) throw new Error(`--${flag} must be a CPU list like 0, 0-1 or 0,2; got "${list}"`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`--${flag}: range ${part} runs backwards`);
    for (let c = from; c <= to; c++) {
      if (c >= cpuCount) throw new Error(`--${flag}: CPU ${c} does not exist (this machine has CPUs 0-${cpuCount - 1})`);
      cpus.add(c);
    }
  }
  return [...cpus].sort((a, b) => a - b);
}

/**
 * The pinning from the two flags: the load generator defaults to every CPU the servers don't get;
 * the two sets must not overlap, and neither may be empty.
 */
export function pinningFrom(serverList: string | undefined, loadGenList: string | undefined, cpuCount: number): Pinning | undefined {
  if (serverList === undefined && loadGenList === undefined) return undefined;
  if (serverList === undefined) throw new Error("--pin-loadgen-cpus needs --pin-server-cpus");
  const server = parseCpuList("pin-server-cpus", serverList, cpuCount);
  const all = Array.from({ length: cpuCount }, (_, i) => i);
  const loadGen = loadGenList === undefined ? all.filter((c) => !server.includes(c)) : parseCpuList("pin-loadgen-cpus", loadGenList, cpuCount);
  if (loadGen.length === 0) throw new Error(`--pin-server-cpus ${serverList} leaves no CPU for the load generator`);
  const shared = loadGen.filter((c) => server.includes(c));
  if (shared.length > 0) throw new Error(`--pin-server-cpus and --pin-loadgen-cpus share CPU ${shared.join(",")}`);
  return { serverCpus: server.join(","), loadGenCpus: loadGen.join(",") };
}

/** The command that starts a server: under `taskset -c <server CPUs>` when pinning is on. */
export function serverCommand(cmd: string, args: string[]): [string, string[]] {
  return pinning === undefined ? [cmd, args] : ["taskset", ["-c", pinning.serverCpus, cmd, ...args]];
}

/** Pins a running process tree (every thread) to the server CPUs — for servers started by other code. */
export async function pinServerTree(root: number | undefined): Promise<void> {
  if (pinning === undefined || root === undefined) return;
  for (const pid of processTree(root)) await taskset(pinning.serverCpus, pid);
}

/** Pins this process (every thread: V8's and libuv's too) to the load-generator CPUs. */
export async function pinLoadGenerator(): Promise<void> {
  if (pinning !== undefined) await taskset(pinning.loadGenCpus, process.pid);
}

async function taskset(cpus: string, pid: number): Promise<void> {
  const res = await runCommand("taskset", ["-a", "-p", "-c", cpus, String(pid)]);
  // A helper process may exit between the listing and this call; that one needs no pinning.
  if (res.code !== 0 && !/No such process/i.test(res.output)) throw new Error(`taskset -a -p -c ${cpus} ${pid} failed: ${res.output.trim()}`);
}
