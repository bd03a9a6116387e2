/**
 * The burst workload (`npm run bench -- --compare burst`, issue 30): N × 1 KiB sent as fast as
 * possible into one queue with no consumer, an idle spell with the backlog, then a drain by 16
 * consumers — while a probe sends, receives and deletes one message on another queue every
 * 100 ms. Peers supply a `BurstPeer`; this driver times the phases and checks every message
 * came out exactly once.
 */
import { setMaxListeners } from "node:events";
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { makeIncompressibleBody, parseBody } from "./payload.js";
import { sleep } from "./phase.js";
import { LatencyRecorder } from "./stats.js";

export const burstPhases = ["fill", "idle", "drain"] as const;
export type BurstPhase = (typeof burstPhases)[number];

export interface BurstOptions {
  messages: number;
  bodyBytes: number;
  batchSize: number;
  producers: number;
  consumers: number;
  idleSeconds: number;
  probeIntervalMs: number;
  /** Each of fill and drain must end within this. */
  phaseTimeoutMs: number;
}

/** What a peer gives the burst driver. */
export interface BurstPeer {
  /** Sends one batch to the burst queue; resolves once the peer acknowledged it durably. */
  send(bodies: string[]): Promise<void>;
  /**
   * Runs `consumers` consumers on the burst queue until `signal` aborts; each hands the bodies it
   * removed (deleted / acked) to `onRemoved`.
   */
  drain(consumers: number, onRemoved: (bodies: readonly string[]) => void, signal: AbortSignal): Promise<void>;
  /** One probe: send, receive and remove one message on the probe queue. */
  probe(): Promise<void>;
  /** The backlog as the peer reports it (GetQueueAttributes or its like). */
  countBacklog(): Promise<number>;
  rssMiB(): number | undefined;
  /** Bytes the peer's data directory holds on disk. */
  diskBytes(): number | undefined;
}

export interface Percentiles {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface BurstResult {
  messages: number;
  fillMsgsPerSec: number;
  drainMsgsPerSec: number;
  idleSeconds: number;
  probe: Record<BurstPhase, Percentiles>;
  /** Probes that failed (an error answer): counted, not timed. */
  probeErrors: number;
  /** The backlog count's latency while the backlog is full, and the last count it gave. */
  count: Percentiles & { lastValue: number };
  rssPeakMiB?: number;
  diskBytesPerMessage?: number;
  lost: number;
  duplicates: number;
}

/** Bytes allocated on disk under `dir` (as du counts them), or undefined if it can't be read. */
export function dirBytes(dir: string): number | undefined {
  try {
    let total = 0;
    const st = lstatSync(dir);
    total += st.blocks * 512;
    if (st.isDirectory()) for (const entry of readdirSync(dir)) total += dirBytes(join(dir, entry)) ?? 0;
    return total;
  } catch {
    return undefined;
  }
}

export function percentiles(samples: readonly number[]): Percentiles {
  const rec = new LatencyRecorder(samples.length);
  for (const s of samples) rec.record(s);
  const s = rec.summary();
  return { count: s.count, p50Ms: s.p50Ms, p99Ms: s.p99Ms, maxMs: s.maxMs };
}

/** Messages per second over `ms`, NaN for an empty span. */
export function ratePerSec(messages: number, ms: number): number {
  return ms > 0 ? (messages * 1000) / ms : Number.NaN;
}

/** A probe that never answers would hold the run forever: past this it counts as failed. */
const probeTimeoutMs = 30_000;

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the burst against `peer`; `log` gets progress lines. */
export async function runBurst(peer: BurstPeer, o: BurstOptions, log: (line: string) => void): Promise<BurstResult> {
  let phase: BurstPhase = "fill";
  const probes: Record<BurstPhase, number[]> = { fill: [], idle: [], drain: [] };
  let probeErrors = 0;
  let rssPeak: number | undefined;
  const sampleRss = (): void => {
    const rss = peer.rssMiB();
    if (rss !== undefined) rssPeak = Math.max(rssPeak ?? 0, rss);
  };
  const probeStop = new AbortController();
  const prober = (async () => {
    // Sequential: a stalled server delays the next probe, and the stall shows in this one's time.
    for (let next = performance.now(); !probeStop.signal.aborted; ) {
      const startedIn = phase;
      const t0 = performance.now();
      try {
        await withTimeout(peer.probe(), probeTimeoutMs, "probe");
        probes[startedIn].push(performance.now() - t0);
      } catch {
        probeErrors++;
      }
      sampleRss();
      next += o.probeIntervalMs;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      else next = performance.now();
    }
  })();

  try {
    log(`burst: filling ${o.messages} messages, no consumer…`);
    const fillStart = performance.now();
    const fillDeadline = fillStart + o.phaseTimeoutMs;
    let nextSeq = 0;
    await Promise.all(
      Array.from({ length: o.producers }, async () => {
        while (nextSeq < o.messages) {
          if (performance.now() > fillDeadline) throw new Error(`burst fill: timed out after ${o.phaseTimeoutMs} ms (${nextSeq} of ${o.messages} sent)`);
          const seqs: number[] = [];
          for (let i = 0; i < o.batchSize && nextSeq < o.messages; i++) seqs.push(nextSeq++);
          const now = performance.now();
          await peer.send(seqs.map((seq) => makeIncompressibleBody(seq, now, o.bodyBytes)));
        }
      }),
    );
    const fillMs = performance.now() - fillStart;
    log(`burst: filled at ${Math.round(ratePerSec(o.messages, fillMs))} msgs/s; idle ${o.idleSeconds} s with the backlog…`);

    phase = "idle";
    const counts: number[] = [];
    let lastValue = Number.NaN;
    const idleEnd = performance.now() + o.idleSeconds * 1000;
    // One count a second while idle: what a dashboard or autoscaler asks for.
    for (let i = 0; i < Math.max(1, o.idleSeconds); i++) {
      const t0 = performance.now();
      lastValue = await peer.countBacklog();
      counts.push(performance.now() - t0);
      const wait = Math.min(1000 - (performance.now() - t0), idleEnd - performance.now());
      if (wait > 0) await sleep(wait);
    }
    if (idleEnd > performance.now()) await sleep(idleEnd - performance.now());
    const disk = peer.diskBytes();
    sampleRss();

    phase = "drain";
    log(`burst: draining with ${o.consumers} consumers…`);
    const seen = new Uint8Array(o.messages);
    let distinct = 0;
    let duplicates = 0;
    const drainStop = new AbortController();
    // Every consumer's long poll listens on this one signal: many listeners are expected.
    setMaxListeners(1_000, drainStop.signal);
    const drainStart = performance.now();
    const timer = setTimeout(() => drainStop.abort(), o.phaseTimeoutMs);
    try {
      await peer.drain(
        o.consumers,
        (bodies) => {
          for (const body of bodies) {
            const { seq } = parseBody(body);
            if (!(seq >= 0 && seq < o.messages)) throw new Error(`burst drain: unknown message #${seq}`);
            if (seen[seq] === 1) duplicates++;
            else {
              seen[seq] = 1;
              distinct++;
            }
          }
          if (distinct >= o.messages) drainStop.abort();
        },
        drainStop.signal,
      );
    } finally {
      clearTimeout(timer);
    }
    const drainMs = performance.now() - drainStart;
    if (distinct < o.messages) throw new Error(`burst drain: timed out after ${o.phaseTimeoutMs} ms (${distinct} of ${o.messages} drained)`);
    const result: BurstResult = {
      messages: o.messages,
      fillMsgsPerSec: ratePerSec(o.messages, fillMs),
      drainMsgsPerSec: ratePerSec(o.messages, drainMs),
      idleSeconds: o.idleSeconds,
      probe: { fill: percentiles(probes.fill), idle: percentiles(probes.idle), drain: percentiles(probes.drain) },
      probeErrors,
      count: { ...percentiles(counts), lastValue },
      lost: o.messages - distinct,
      duplicates,
    };
    if (rssPeak !== undefined) result.rssPeakMiB = rssPeak;
    if (disk !== undefined) result.diskBytesPerMessage = disk / o.messages;
    return result;
  } finally {
    probeStop.abort();
    await prober;
  }
}
