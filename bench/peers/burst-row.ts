/** What the burst rows share: their options from the workload, and a RowResult around a BurstResult. */
import type { BurstOptions, BurstResult } from "../burst.js";
import type { PeerId, RowResult, Workload } from "../row.js";

export const burstProbeIntervalMs = 100;

export function burstOptions(w: Workload): BurstOptions {
  return {
    messages: w.burstMessages,
    bodyBytes: w.bodyBytes,
    batchSize: w.batchSize,
    producers: w.producers,
    consumers: w.burstConsumers,
    idleSeconds: w.burstIdleSeconds,
    probeIntervalMs: burstProbeIntervalMs,
    // Generous for a deep backlog on a slow peer: 3 minutes plus 2 ms a message.
    phaseTimeoutMs: 180_000 + w.burstMessages * 2,
  };
}

export interface BurstRowParts {
  peer: PeerId;
  label: string;
  durability: string;
  burst: BurstResult;
  version?: string | undefined;
  notes: string[];
}

/**
 * The row's `saturated` phase is the drain (its rate; latency is the drain-phase probe's), so the
 * generic parts of the bench (logs, best-of-rounds) read something meaningful; the report prints
 * the burst's own table.
 */
export function burstRowResult(p: BurstRowParts): RowResult {
  const { burst } = p;
  const probe = burst.probe.drain;
  const result: RowResult = {
    peer: p.peer,
    label: p.label,
    durability: p.durability,
    saturated: {
      label: `${p.peer} burst drain`,
      messages: burst.messages,
      elapsedMs: (burst.messages * 1000) / burst.drainMsgsPerSec,
      msgsPerSec: burst.drainMsgsPerSec,
      latency: { count: probe.count, p50Ms: probe.p50Ms, p90Ms: Number.NaN, p99Ms: probe.p99Ms, maxMs: probe.maxMs, meanMs: Number.NaN },
      duplicates: burst.duplicates,
      lost: burst.lost,
    },
    cpu: { loadGenCorePct: Number.NaN },
    burst,
    notes: p.notes,
  };
  if (p.version !== undefined) result.version = p.version;
  if (burst.rssPeakMiB !== undefined) result.serverRssMiB = burst.rssPeakMiB;
  return result;
}
