/** --time-split for a Sluice row: mark the measured phase on the server's clock, then split its profile. */
import { mainThreadCpuSeconds } from "../procs.js";
import type { RowContext, RowResult } from "../row.js";
import { type ClockWindow, clockNowUs, profileOfPid, splitProfile } from "../time-split.js";

export interface SplitMeter {
  /** The measured phase ended. */
  stop(): void;
  /** After the server exited (it writes its profile then): the split, on the row's result. */
  attach(result: RowResult, messages: number): void;
}

export function startSplitMeter(ctx: RowContext, tag: string, pid: number | undefined): SplitMeter {
  const startUs = clockNowUs();
  const cpu0 = mainThreadCpuSeconds(pid);
  let window: ClockWindow | undefined;
  let mainThreadCpuUs: number | undefined;
  return {
    stop() {
      window = { startUs, endUs: clockNowUs() };
      const cpu1 = mainThreadCpuSeconds(pid);
      if (cpu0 !== undefined && cpu1 !== undefined) mainThreadCpuUs = (cpu1 - cpu0) * 1e6;
    },
    attach(result, messages) {
      if (ctx.timeSplit !== true || ctx.cpuProfDir === undefined || pid === undefined || window === undefined) return;
      const profile = profileOfPid(ctx.cpuProfDir, pid);
      if (profile === undefined) {
        ctx.log(`${tag}: no CPU profile of pid ${pid} in ${ctx.cpuProfDir}: no time split`);
        return;
      }
      result.timeSplit = { ...splitProfile(profile, messages, window), ...(mainThreadCpuUs === undefined ? {} : { mainThreadCpuUs }) };
    },
  };
}
