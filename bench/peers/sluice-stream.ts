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

export const sluiceStreamRow: Row = {
  peer: "sluice",
  label: "Sluice (SQLite WAL, fsync before ack), TypeScript SDK",
  async run(ctx: RowContext): Promise<RowResult> {
    const { streamJobs: jobs, streamRatePerSec: rate, streamSeconds: seconds } = ctx.workload;
    const perJob = rate * seconds;
    const rs = await startRowServer(ctx, "sluice-stream");
    const { server } = rs;
    const lean = leanFetch(server.url, jobs + 4);
    let outputRequests = 0;
    // Each output request's round trip: the part of emit → receive the worker waits on the server.
    const outputRtt = new LatencyRecorder(1_000_000);
    // Each chunk's hops (stream-hops.ts): which request carried it, when it went and was answered.
    const hops = new StreamHops(perJob);
    const workerFetch: FetchLike = async (url, init) => {
      const jobId = /\/v1\/jobs\/([^/]+)\/output$/.exec(url)?.[1];
      if (jobId === undefined) return lean.fetch(url, init);
      outputRequests++;
      const { chunks } = JSON.parse(init?.body as string) as { chunks: Chunk[] };
      const sentAt = performance.now();
      hops.sent(jobId, chunks, sentAt);
      const res = await lean.fetch(url, init);
      const answeredAt = performance.now();
      outputRtt.record(answeredAt - sentAt);
      if (res.ok) hops.answered(jobId, chunks, answeredAt);
      return res;
    };
    // Every client following its job: its snapshot came and what was stored before it was read.
    let following = 0;
    let allFollowing: () => void = () => {};
    const followingAll = new Promise<void>((resolve) => (allFollowing = resolve));
    const clientFetch: FetchLike = async (url, init) => {
      const res = await fetch(url, init);
      if (url.includes("/output-chunks") && ++following === jobs) allFollowing();
      return res;
    };
    const workers = new Sluice({ url: server.url, fetch: workerFetch });
    const clients = new Sluice({ url: server.url, fetch: clientFetch });
    let worker: Worker | undefined;
    const ticker = new Ticker();
    try {
      let go: () => void = () => {};
      const started = new Promise<void>((resolve) => (go = resolve));
      let firstEmitMs = Number.POSITIVE_INFINITY;
      let lastReceiveMs = 0;
      worker = workers.queue(queue).work(
        async (_job, jobCtx) => {
          await started;
          const t0 = performance.now();
          firstEmitMs = Math.min(firstEmitMs, t0);
          let seq = 0;
          while (seq < perJob) {
            const due = Math.min(perJob, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
            for (; seq < due; seq++) jobCtx.emit([seq, performance.now()] satisfies Chunk);
            if (seq < perJob) await ticker.next();
          }
          return { chunks: perJob };
        },
        { concurrency: jobs, leaseSeconds: Math.max(30, seconds * 3) },
      );
      const latency = new LatencyRecorder(jobs * perJob);
      const handles = await Promise.all(Array.from({ length: jobs }, (_, i) => clients.queue(queue).submit({ job: i })));
      const checks = handles.map(() => new StreamCheck(perJob, latency));
      let succeeded = 0;
      const reading = handles.map(async (handle, i) => {
        const check = checks[i]!;
        for await (const chunk of handle.stream<Chunk>()) {
          const now = performance.now();
          check.take(chunk, now);
          hops.received(handle.id, chunk[0], chunk[1], now);
          lastReceiveMs = now;
        }
        succeeded++;
      });
      // The handlers start emitting once every job is leased and every client is following it.
      await followingAll;
      ctx.log(`sluice-stream: ${jobs} clients following; emitting ${rate} chunks/s per job for ${seconds} s…`);
      const stopMeter = startCpuMeter(server.pid);
      go();
      const settled = await Promise.allSettled(reading);
      const cpu = stopMeter();
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
      if (failed) ctx.log(`sluice-stream: a stream failed: ${String(failed.reason)}`);
      const emitted = jobs * perJob;
      const received = checks.reduce((n, c) => n + c.received, 0);
      const distinct = checks.reduce((n, c) => n + c.distinct, 0);
      const outOfOrder = checks.reduce((n, c) => n + c.outOfOrder, 0);
      const duplicates = checks.reduce((n, c) => n + c.duplicates, 0);
      const lost = emitted - distinct;
      const summary = latency.summary();
      const elapsedMs = Math.max(1, lastReceiveMs - firstEmitMs);
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
        outputRequests,
        outputRtt: outputRtt.summary(),
        hops: hops.summary(),
        chunksPerSec: (received * 1000) / elapsedMs,
        loadGenCorePct: cpu.loadGenCorePct,
        ...(cpu.serverCorePct === undefined ? {} : { serverCorePct: cpu.serverCorePct }),
        ...(cpu.otherCorePct === undefined ? {} : { otherCorePct: cpu.otherCorePct }),
      };
      const h = stream.hops;
      ctx.log(`sluice-stream: hops p50/p99 ms: emit → sent ${h.emitToSent.p50Ms.toFixed(1)}/${h.emitToSent.p99Ms.toFixed(1)}, sent → answered ${h.sentToAnswered.p50Ms.toFixed(1)}/${h.sentToAnswered.p99Ms.toFixed(1)}, answered → received ${h.answeredToReceived.p50Ms.toFixed(1)}/${h.answeredToReceived.p99Ms.toFixed(1)}`);
      ctx.log(`sluice-stream: ${received} of ${emitted} chunks, in order: ${stream.allInOrder ? "yes" : "NO"}, p99 ${summary.p99Ms.toFixed(1)} ms, ${outputRequests} output requests (round trip p50 ${stream.outputRtt.p50Ms.toFixed(1)} / p99 ${stream.outputRtt.p99Ms.toFixed(1)} ms)`);
      const result: RowResult = {
        peer: "sluice",
        label: this.label,
        durability: "SQLite WAL, fdatasync before every acknowledgement",
        saturated: { label: "sluice stream", messages: emitted, elapsedMs, msgsPerSec: stream.chunksPerSec, latency: summary, duplicates, lost },
        cpu,
        stream,
        notes: [],
      };
      if (rs.version !== undefined) result.version = rs.version;
      const rss = server.rssMiB();
      if (rss !== undefined) result.serverRssMiB = rss;
      return result;
    } catch (err) {
      throw withServerOutput(err, rs);
    } finally {
      ticker.stop();
      await worker?.close({ timeoutMs: 5_000 });
      await lean.close();
      await rs.stop();
    }
  },
};
