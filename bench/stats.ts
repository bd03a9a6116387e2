/** Latency samples and percentiles. Samples go into a preallocated array: no allocation per message. */

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

export class LatencyRecorder {
  private readonly samples: Float64Array;
  private n = 0;

  constructor(capacity: number) {
    this.samples = new Float64Array(capacity);
  }

  /** Extra samples past capacity are dropped (a duplicate delivery can't overflow the buffer). */
  record(ms: number): void {
    if (this.n < this.samples.length) this.samples[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  summary(): LatencySummary {
    const sorted = this.samples.slice(0, this.n).sort();
    let sum = 0;
    for (let i = 0; i < sorted.length; i++) sum += sorted[i] ?? 0;
    return {
      count: this.n,
      p50Ms: percentile(sorted, 0.5),
      p90Ms: percentile(sorted, 0.9),
      p99Ms: percentile(sorted, 0.99),
      maxMs: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] ?? Number.NaN),
      meanMs: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    };
  }
}

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}
