/**
 * The stream comparison's figures (`--compare stream`, bench/peers/sluice-stream.ts): did every
 * chunk reach its client, in order, and how long from the worker's ctx.emit() to the client's
 * hands — and the table the report prints of them.
 */
import type { LatencySummary } from "./stats.js";
import type { StreamHopsSummary } from "./stream-hops.js";

export interface StreamResult {
  jobs: number;
  ratePerJob: number;
  seconds: number;
  /** Chunks emitted, all jobs together. */
  emitted: number;
  /** Chunks the clients received, duplicates and out-of-order ones included. */
  received: number;
  /** Chunks that came before one emitted earlier in their job (each counted once). */
  outOfOrder: number;
  duplicates: number;
  /** Emitted but never received. */
  lost: number;
  /** Every chunk reached its client once, in order, and every job succeeded. */
  allInOrder: boolean;
  jobsSucceeded: number;
  /** Worker emit → client receive, one clock (both in the load generator's process). */
  latency: LatencySummary;
  targetP99Ms: number;
  /** POST /v1/jobs/{id}/output requests the workers made. */
  outputRequests: number;
  /** Their round trips (sent → answered), as the worker saw them. */
  outputRtt: LatencySummary;
  /** Each chunk's emit → receive in its three hops (stream-hops.ts). */
  hops: StreamHopsSummary;
  /** Chunks received a second, from the first emit to the last chunk received. */
  chunksPerSec: number;
  serverCorePct?: number;
  loadGenCorePct: number;
  otherCorePct?: number;
}

export const streamHeaders = ["peer", "jobs × chunks/s × s", "chunks", "all in order", "lost/dup/out of order", "chunks/s", "emit → receive ms p50 / p99 / max", "p99 ≤ target", "output requests", "output round trip ms p50 / p99", "per chunk p50 / p99 ms: emit → sent · sent → answered · answered → received", "server CPU", "server µs/chunk", "loadgen CPU", "other CPU"];

export const streamLegend =
  "Each job's worker (TypeScript SDK, ctx.emit) emits [seq, time] chunks at a steady rate; each job has its own client reading job.stream() (SSE). all in order: every chunk reached its client once, in emit order, and every job succeeded. emit → receive: from ctx.emit() to the chunk in the client's for-await loop, on one clock (worker and clients share the load generator's process). output requests: the batches the workers sent (at once when none is in flight, else what gathered behind it, up to 1,000 chunks), and their round trips as the workers saw them. per chunk: where each chunk's emit → receive went — waiting in the worker's SDK behind the request in flight (emit → sent), its own request (sent → answered), and the event's way to the client (answered → received, below zero when the event came before the answer). CPU: % of one core while the jobs ran.";

const int = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? "–" : Math.round(n).toLocaleString("en-US"));
const ms = (n: number): string => (!Number.isFinite(n) ? "–" : n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));
const pct = (n: number | undefined): string => (n === undefined || !Number.isFinite(n) ? "–" : `${Math.round(n)}%`);

/** One table row per row that streamed. */
export function streamCells(rows: ReadonlyArray<{ label: string; stream?: StreamResult }>): string[][] {
  return rows.flatMap((r) => {
    const s = r.stream;
    if (s === undefined) return [];
    const serverMicros = s.serverCorePct === undefined || s.chunksPerSec === 0 ? undefined : ((s.serverCorePct / 100) * 1e6) / s.chunksPerSec;
    return [
      [
        r.label,
        `${s.jobs} × ${int(s.ratePerJob)} × ${s.seconds}`,
        int(s.emitted),
        s.allInOrder ? "yes" : "NO",
        `${s.lost}/${s.duplicates}/${s.outOfOrder}`,
        int(s.chunksPerSec),
        `${ms(s.latency.p50Ms)} / ${ms(s.latency.p99Ms)} / ${ms(s.latency.maxMs)}`,
        `${s.latency.p99Ms <= s.targetP99Ms ? "yes" : "no"} (${s.targetP99Ms} ms)`,
        int(s.outputRequests),
        `${ms(s.outputRtt.p50Ms)} / ${ms(s.outputRtt.p99Ms)}`,
        [s.hops.emitToSent, s.hops.sentToAnswered, s.hops.answeredToReceived].map((h) => `${ms(h.p50Ms)} / ${ms(h.p99Ms)}`).join(" · "),
        pct(s.serverCorePct),
        int(serverMicros),
        pct(s.loadGenCorePct),
        pct(s.otherCorePct),
      ],
    ];
  });
}
