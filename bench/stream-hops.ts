/**
 * Where a streamed chunk's emit → receive time goes (`--compare stream`): waiting in the worker's
 * SDK for the output request before it to be answered (emit → sent), its own output request
 * (sent → answered), and the event reaching the client (answered → received; below zero when the
 * event came first: the server writes it before the answer). One clock: the load generator's.
 */
import { LatencyRecorder, type LatencySummary } from "./stats.js";

export interface StreamHopsSummary {
  emitToSent: LatencySummary;
  sentToAnswered: LatencySummary;
  answeredToReceived: LatencySummary;
}

interface JobTimes {
  emitted: Float64Array;
  sent: Float64Array;
  answered: Float64Array;
  received: Float64Array;
}

export class StreamHops {
  private readonly jobs = new Map<string, JobTimes>();

  constructor(private readonly perJob: number) {}

  /** An output request of `jobId` carrying these `[seq, …]` chunks went out at `atMs` (a resend keeps the first). */
  sent(jobId: string, chunks: ReadonlyArray<readonly [number, ...unknown[]]>, atMs: number): void {
    const t = this.times(jobId);
    for (const [seq] of chunks) if (t.sent[seq] === 0) t.sent[seq] = atMs;
  }

  answered(jobId: string, chunks: ReadonlyArray<readonly [number, ...unknown[]]>, atMs: number): void {
    const t = this.times(jobId);
    for (const [seq] of chunks) t.answered[seq] = atMs;
  }

  received(jobId: string, seq: number, emittedAtMs: number, atMs: number): void {
    const t = this.times(jobId);
    if (seq < 0 || seq >= this.perJob) return;
    t.emitted[seq] = emittedAtMs;
    t.received[seq] = atMs;
  }

  summary(): StreamHopsSummary {
    const capacity = this.jobs.size * this.perJob;
    const [a, b, c] = [new LatencyRecorder(capacity), new LatencyRecorder(capacity), new LatencyRecorder(capacity)];
    for (const t of this.jobs.values()) {
      for (let seq = 0; seq < this.perJob; seq++) {
        if (t.received[seq] === 0 || t.sent[seq] === 0 || t.answered[seq] === 0) continue;
        a.record(t.sent[seq]! - t.emitted[seq]!);
        b.record(t.answered[seq]! - t.sent[seq]!);
        c.record(t.received[seq]! - t.answered[seq]!);
      }
    }
    return { emitToSent: a.summary(), sentToAnswered: b.summary(), answeredToReceived: c.summary() };
  }

  private times(jobId: string): JobTimes {
    let t = this.jobs.get(jobId);
    if (!t) {
      const n = this.perJob;
      t = { emitted: new Float64Array(n), sent: new Float64Array(n), answered: new Float64Array(n), received: new Float64Array(n) };
      this.jobs.set(jobId, t);
    }
    return t;
  }
}
