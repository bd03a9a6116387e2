/**
 * Event-loop stalls: a timer due every `lagSampleMs` measures how late it fires — the time the
 * loop was busy with something else (a long synchronous store call, say) and no request was
 * answered. Each lateness goes into sluice_event_loop_lag_seconds; one past `lagWarnMs` is logged.
 */
import { performance } from "node:perf_hooks";
import { Histogram, type Registry } from "prom-client";

export const lagSampleMs = 100;
/** A stall this long or longer is logged (one line per stall). */
export const lagWarnMs = 500;

const lagBuckets = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function eventLoopLagMetric(registry: Registry): (lateMs: number) => void {
  const lag = new Histogram({
    name: "sluice_event_loop_lag_seconds",
    help: `How late a timer due every ${lagSampleMs} ms fired: time the event loop was blocked and answered nothing.`,
    buckets: lagBuckets,
    registers: [registry],
  });
  return (lateMs) => lag.observe(lateMs / 1000);
}

/** What one lateness sample leads to: the histogram always, the warning past the threshold. */
export function lagSampleHandler(p: { observe: (lateMs: number) => void; warn: (stalledMs: number) => void; warnMs?: number }): (lateMs: number) => void {
  const warnMs = p.warnMs ?? lagWarnMs;
  return (lateMs) => {
    p.observe(lateMs);
    if (lateMs >= warnMs) p.warn(lateMs);
  };
}

/** Starts the sampling timer (unref'd: it never keeps the process up); returns its stop. */
export function startLagSampler(onSample: (lateMs: number) => void, intervalMs = lagSampleMs): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const arm = (): void => {
    const dueAt = performance.now() + intervalMs;
    timer = setTimeout(() => {
      onSample(Math.max(0, performance.now() - dueAt));
      if (!stopped) arm();
    }, intervalMs);
    timer.unref();
  };
  arm();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
