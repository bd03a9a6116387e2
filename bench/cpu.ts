/** CPU accounting for one measured phase: the server process (from /proc) and this load generator. */
import { performance } from "node:perf_hooks";
import { processCpuSeconds } from "./procs.js";
import type { CpuUse } from "./row.js";

export function startCpuMeter(serverPid: number | undefined): () => CpuUse {
  const wall0 = performance.now();
  const server0 = processCpuSeconds(serverPid);
  const self0 = process.cpuUsage();
  return () => {
    const wallS = (performance.now() - wall0) / 1000;
    const server1 = processCpuSeconds(serverPid);
    const self = process.cpuUsage(self0);
    const use: CpuUse = { loadGenCorePct: ((self.user + self.system) / 1e6 / wallS) * 100 };
    if (server0 !== undefined && server1 !== undefined) use.serverCorePct = ((server1 - server0) / wallS) * 100;
    return use;
  };
}
