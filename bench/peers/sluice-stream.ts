/**
 * `--compare stream`: streamed output through the TypeScript SDK. N jobs run at once; each one's
 * worker handler emits `[seq, emittedAtMs]` chunks with ctx.emit() at a steady rate for S seconds,
 * and each job has its own client reading `job.stream()` (Server-Sent Events). The row reports
 * whether every chunk reached its client once and in order, and the emit → receive latency (one
 * clock: workers and clients run in this process). The workers use the lean fetch (JSON only);
 * the clients use global fetch, which streams the SSE bodies.
 */
import { performance } from "node:perf_hooks";
import { Sluice } from "../../client/src/index.js";
import type { FetchLike, Worker } from "../../client/src/index.js";
import { startCpuMeter } from "../cpu.js";
import { leanFetch } from "../lean-fetch.js";
import type { Row, RowContext, RowResult } from "../row.js";
import { LatencyRecorder } from "../stats.js";
import { StreamHops } from "../stream-hops.js";
import type { StreamResult } from "../stream-result.js";
import { startRowServer, withServerOutput } from "./sluice-row-server.js";

const queue = "bench-stream";
/** The target for worker-emit → client-receive at the 99th percentile. */
const targetP99Ms = 50;
/** How often each handler wakes to emit the chunks that have come due. */
const tickMs = 1;

type Chunk = [seq: number, emittedAtMs: number];

/** One timer for every handler (not one each): the load generator's CPU goes to the SDK, not to timers. */
class Ticker {
  private waiters: Array<() => void> = [];
  private readonly timer = setInterval(() => {
    const due = this.waiters;
    this.waiters = [];
    for (const wake of due) wake();
  }, tickMs);

  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  stop(): void {
    clearInterval(this.timer);
    for (const wake of this.waiters.splice(0)) wake();
  }
}

/** One job's client: receives its chunks and checks they come once, in order. */
class StreamCheck {
  next = 0;
  received = 0;
  outOfOrder = 0;
  duplicates = 0;
  private readonly seen: Uint8Array;

  constructor(
    readonly expected: number,
    private readonly latency: LatencyRecorder,
  ) {
    this.seen = new Uint8Array(expected);
  }

  take([seq, emittedAtMs]: Chunk, nowMs: number): void {
    this.received++;
    this.latency.record(nowMs - emittedAtMs);
    if (seq !== this.next) this.outOfOrder++;
    if (seq >= 0 && seq < this.expected) {
      if (this.seen[seq] === 1) this.duplicates++;
      this.seen[seq] = 1;
    }
    this.next = seq + 1;
  }

  get distinct(): number {
    let n = 0;
    for (const s of this.seen) n += s;
    return n;
  }
}

/** What one phase (the warm-up, then the measured one) records; the shared worker and fetches use the current one. */
interface Phase {
  perJob: number;
  started: Promise<void>;
  outputRequests: number;
  outputRtt: LatencyRecorder;
  hops: StreamHops;
}

export const sluiceStreamRow: Row = {
  peer: "sluice",
  label: "Sluice (SQLite WAL, fsync before ack), TypeScript SDK",
  async run(ctx: RowContext): Promise<RowResult> {
    const { streamJobs: jobs, streamRatePerSec: rate, streamSeconds: seconds, streamWarmupSeconds: warmupSeconds } = ctx.workload;
    const rs = await startRowServer(ctx, "sluice-stream");
    const { server } = rs;
    const lean = leanFetch(server.url, jobs + 4);
    let phase: Phase | undefined;
    const workerFetch: FetchLike = async (url, init) => {
      const jobId = /\/v1\/jobs\/([^/]+)\/output$/.exec(url)?.[1];
      const p = phase;
      if (jobId === undefined || p === undefined) return lean.fetch(url, init);
      p.outputRequests++;
      const { chunks } = JSON.parse(init?.body as string) as { chunks: Chunk[] };
      const sentAt = performance.now();
      // Each chunk's hops (stream-hops.ts): which request carried it, when it went and was answered.
      p.hops.sent(jobId, chunks, sentAt);
      const res = await lean.fetch(url, init);
      const answeredAt = performance.now();
      // Each output request's round trip: the part of emit → receive the worker waits on the server.
      p.outputRtt.record(answeredAt - sentAt);
      if (res.ok) p.hops.answered(jobId, chunks, answeredAt);
      return res;
    };
    // Every client following its job: its snapshot came and what was stored before it was read.
    let following = 0;
    let allFollowing: () => void = () => {};
    const clientFetch: FetchLike = async (url, init) => {
      const res = await fetch(url, init);
      if (url.includes("/output-chunks") && ++following === jobs) allFollowing();
      return res;
    };
    const workers = new Sluice({ url: server.url, fetch: workerFetch });
    const clients = new Sluice({ url: server.url, fetch: clientFetch });
    let firstEmitMs = Number.POSITIVE_INFINITY;
    const ticker = new Ticker();
    const worker: Worker = workers.queue(queue).work(
      async (_job, jobCtx) => {
        const p = phase!;
        await p.started;
        const t0 = performance.now();
        firstEmitMs = Math.min(firstEmitMs, t0);
        let seq = 0;
        while (seq < p.perJob) {
          const due = Math.min(p.perJob, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
          for (; seq < due; seq++) jobCtx.emit([seq, performance.now()] satisfies Chunk);
          if (seq < p.perJob) await ticker.next();
        }
        return { chunks: p.perJob };
      },
      { concurrency: jobs, leaseSeconds: Math.max(30, (warmupSeconds + seconds) * 3) },
    );

    /** `jobs` jobs streaming for `s` seconds, each to its own client; what their clients saw. */
    const streamFor = async (s: number) => {
      const perJob = rate * s;
      let go: () => void = () => {};
      const started = new Promise<void>((resolve) => (go = resolve));
      const p: Phase = { perJob, started, outputRequests: 0, outputRtt: new LatencyRecorder(1_000_000), hops: new StreamHops(perJob) };
      phase = p;
      following = 0;
      const followingAll = new Promise<void>((resolve) => (allFollowing = resolve));
      firstEmitMs = Number.POSITIVE_INFINITY;
      let lastReceiveMs = 0;
      const latency = new LatencyRecorder(jobs * perJob);
      const handles = await Promise.all(Array.from({ length: jobs }, (_, i) => clients.queue(queue).submit({ job: i })));
      const checks = handles.map(() => new StreamCheck(perJob, latency));
      let succeeded = 0;
      const reading = handles.map(async (handle, i) => {
        const check = checks[i]!;
        for await (const chunk of handle.stream<Chunk>()) {
          const now = performance.now();
          check.take(chunk, now);
          p.hops.received(handle.id, chunk[0], chunk[1], now);
          lastReceiveMs = now;
        }
        succeeded++;
      });
      // The handlers start emitting once every job is leased and every client is following it.
      await followingAll;
      ctx.log(`sluice-stream: ${jobs} clients following; emitting ${rate} chunks/s per job for ${s} s…`);
      const stopMeter = startCpuMeter(server.pid);
      go();
      const settled = await Promise.allSettled(reading);
      const cpu = stopMeter();
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed) ctx.log(`sluice-stream: a stream failed: ${String(failed.reason)}`);
      return { p, checks, latency, succeeded, cpu, elapsedMs: Math.max(1, lastReceiveMs - firstEmitMs) };
    };

    try {
      if (warmupSeconds > 0) {
        // Not measured: the first seconds of a process (the load generator's above all) run cold
        // code and a young heap; a server and its clients have that once in their life.
        ctx.log(`sluice-stream: warm-up (${warmupSeconds} s, not measured)`);
        await streamFor(warmupSeconds);
      }
      const { p, checks, latency, succeeded, cpu, elapsedMs } = await streamFor(seconds);
      const perJob = p.perJob;
      const emitted = jobs * perJob;
      const received = checks.reduce((n, c) => n + c.received, 0);
      const distinct = checks.reduce((n, c) => n + c.distinct, 0);
      const outOfOrder = checks.reduce((n, c) => n + c.outOfOrder, 0);
      const duplicates = checks.reduce((n, c) => n + c.duplicates, 0);
      const lost = emitted - distinct;
      const summary = latency.summary();
      const stream: StreamResult = {
        jobs,
        ratePerJob: rate,
        seconds,
        emitted,
        received,
        outOfOrder,
        duplicates,
        lost,
        allInOrder: lost === 0 && duplicates === 0 && outOfOrder === 0 && succeeded === jobs,
        jobsSucceeded: succeeded,
        latency: summary,
        targetP99Ms,
        outputRequests: p.outputRequests,
        outputRtt: p.outputRtt.summary(),
        hops: p.hops.summary(),
        chunksPerSec: (received * 1000) / elapsedMs,
        loadGenCorePct: cpu.loadGenCorePct,
        ...(cpu.serverCorePct === undefined ? {} : { serverCorePct: cpu.serverCorePct }),
        ...(cpu.otherCorePct === undefined ? {} : { otherCorePct: cpu.otherCorePct }),
      };
      const h = stream.hops;
      ctx.log(`sluice-stream: hops p50/p99 ms: emit → sent ${h.emitToSent.p50Ms.toFixed(1)}/${h.emitToSent.p99Ms.toFixed(1)}, sent → answered ${h.sentToAnswered.p50Ms.toFixed(1)}/${h.sentToAnswered.p99Ms.toFixed(1)}, answered → received ${h.answeredToReceived.p50Ms.toFixed(1)}/${h.answeredToReceived.p99Ms.toFixed(1)}`);
      ctx.log(`sluice-stream: ${received} of ${emitted} chunks, in order: ${stream.allInOrder ? "yes" : "NO"}, p99 ${summary.p99Ms.toFixed(1)} ms, ${p.outputRequests} output requests (round trip p50 ${stream.outputRtt.p50Ms.toFixed(1)} / p99 ${stream.outputRtt.p99Ms.toFixed(1)} ms)`);
      const result: RowResult = {
        peer: "sluice",
        label: this.label,
        durability: "SQLite WAL, fdatasync before every acknowledgement",
        saturated: { label: "sluice stream", messages: emitted, elapsedMs, msgsPerSec: stream.chunksPerSec, latency: summary, duplicates, lost },
        cpu,
        stream,
        notes: warmupSeconds > 0 ? [`after a ${warmupSeconds} s warm-up stream (not measured)`] : [],
      };
      if (rs.version !== undefined) result.version = rs.version;
      const rss = server.rssMiB();
      if (rss !== undefined) result.serverRssMiB = rss;
      return result;
    } catch (err) {
      throw withServerOutput(err, rs);
    } finally {
      ticker.stop();
      await worker.close({ timeoutMs: 5_000 });
      await lean.close();
      await rs.stop();
    }
  },
};
