/**
 * CPU accounting for one measured phase: the server process and this load generator — and
 * everything else on the box, because the machines are shared and a busy neighbour skews a row.
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { sleep } from "./phase.js";
import { processCpuSeconds } from "./procs.js";
import type { CpuUse } from "./row.js";

/** Linux USER_HZ: /proc/stat counts in these. */
const ticksPerSecond = 100;

/** Busy CPU seconds of the whole machine so far (all cores; idle and iowait excluded), or undefined off Linux. */
export function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
    return busy / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** A server's CPU seconds so far: its pid (one process), or a reader (a process tree, a cluster). */
export type ServerCpu = number | undefined | (() => number | undefined);

export function startCpuMeter(server: ServerCpu): () => CpuUse {
  const serverSeconds = typeof server === "function" ? server : () => processCpuSeconds(server);
  const wall0 = performance.now();
  const server0 = serverSeconds();
  const machine0 = machineBusySeconds();
  const self0 = process.cpuUsage();
  return () => {
    const wallS = (performance.now() - wall0) / 1000;
    const server1 = serverSeconds();
    const machine1 = machineBusySeconds();
    const self = process.cpuUsage(self0);
    const selfS = (self.user + self.system) / 1e6;
    const use: CpuUse = { loadGenCorePct: (selfS / wallS) * 100 };
    if (server0 !== undefined && server1 !== undefined) {
      use.serverCorePct = ((server1 - server0) / wallS) * 100;
      if (machine0 !== undefined && machine1 !== undefined) {
        use.otherCorePct = Math.max(0, ((machine1 - machine0 - (server1 - server0) - selfS) / wallS) * 100);
      }
    }
    return use;
  };
}

/**
 * Waits (at most `maxWaitS`) until the rest of the machine uses less than `maxBusyPct` % of one
 * core over a 2-second sample, so a row doesn't start while someone else's build is running.
 * Returns the last sample.
 */
export async function waitForQuiet(maxWaitS: number, maxBusyPct: number, log: (line: string) => void): Promise<number | undefined> {
  const sampleS = 2;
  let busyPct: number | undefined;
  for (let waited = 0; waited <= maxWaitS; waited += sampleS) {
    const b0 = machineBusySeconds();
    const self0 = process.cpuUsage();
    await sleep(sampleS * 1000);
    const b1 = machineBusySeconds();
    if (b0 === undefined || b1 === undefined) return undefined;
    const self = process.cpuUsage(self0);
    busyPct = ((b1 - b0 - (self.user + self.system) / 1e6) / sampleS) * 100;
    if (busyPct < maxBusyPct) return busyPct;
    if (waited === 0) log(`the machine is busy (other processes use ${Math.round(busyPct)}% of a core); waiting up to ${maxWaitS} s for it to settle…`);
  }
  log(`still busy after ${maxWaitS} s (${Math.round(busyPct ?? 0)}% of a core): measuring anyway — read this row with care`);
  return busyPct;
}
