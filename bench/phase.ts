/**
 * The peer-independent load driver. A phase sends a fixed number of messages through some queue
 * and waits until every one has been consumed ("done": deleted, or completed). Peers supply only
 * `send` and a consumer that reports back via `received()` and `done()`; so a new row (FIFO, jobs,
 * another peer) reuses the same flow control, latency accounting and loss/duplicate checks.
 */
import { setMaxListeners } from "node:events";
import { performance } from "node:perf_hooks";
import { LatencyRecorder } from "./stats.js";
import type { LatencySummary } from "./stats.js";

export interface PhaseOptions {
  label: string;
  messages: number;
  batchSize: number;
  producers: number;
  /**
   * Closed loop: producers pause while this many messages are sent but not yet done. Without a
   * cap, producers (one write per batch) outrun consumers (two round trips per batch), the backlog
   * grows to the whole run, and "latency" would only measure the size of the run.
   */
  backlogMax: number;
  /** Open loop instead: send at this fixed rate (msgs/s), latency measured from the scheduled time. */
  ratePerSecond?: number;
  timeoutMs: number;
}

/** Sends one batch; `seqs` are the message numbers, `sentAtMs` the time to embed in each body. */
export type SendBatch = (seqs: readonly number[], sentAtMs: number) => Promise<void>;

export interface PhaseResult {
  label: string;
  messages: number;
  /** From the first send to the last message done. */
  elapsedMs: number;
  msgsPerSec: number;
  latency: LatencySummary;
  duplicates: number;
  lost: number;
}

/** Open-loop sends still awaiting a reply; past this the pacer waits (and the delay shows up as latency). */
const pacedInflightMax = 64;

export class Phase {
  readonly options: PhaseOptions;
  readonly latency: LatencyRecorder;
  /** Aborted when the phase ends (complete or failed): consumers cancel their long polls on it. */
  readonly signal: AbortSignal;
  private readonly abort = new AbortController();
  private readonly seen: Uint8Array;
  private readonly deadlineMs: number;
  private nextSeq = 0;
  private sent = 0;
  private doneCount = 0;
  private distinctReceived = 0;
  private duplicates = 0;
  private firstSendAtMs: number | undefined;
  private lastDoneAtMs = 0;
  private progressWaiters: Array<() => void> = [];
  private settle!: { resolve: () => void; reject: (err: unknown) => void };
  private readonly finished: Promise<void>;
  private failure: unknown;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: PhaseOptions) {
    this.options = options;
    this.latency = new LatencyRecorder(options.messages);
    this.seen = new Uint8Array(options.messages);
    this.signal = this.abort.signal;
    // Every parked long poll listens on this one signal; more than 10 is expected, not a leak.
    setMaxListeners(1_000, this.signal);
    this.deadlineMs = performance.now() + options.timeoutMs;
    this.finished = new Promise<void>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Rejections are surfaced by run(); this keeps an early failure from being "unhandled".
    this.finished.catch(() => undefined);
  }

  get isOver(): boolean {
    return this.abort.signal.aborted;
  }

  /**
   * A consumer got message `seq` (sent at `sentAtMs`). Returns false for a duplicate delivery,
   * which the consumer should still delete but not report as done.
   */
  received(seq: number, sentAtMs: number, nowMs = performance.now()): boolean {
    if (!(seq >= 0 && seq < this.seen.length)) {
      this.fail(new Error(`${this.options.label}: received unknown message #${seq}`));
      return false;
    }
    if (this.seen[seq] === 1) {
      this.duplicates++;
      return false;
    }
    this.seen[seq] = 1;
    this.distinctReceived++;
    this.latency.record(nowMs - sentAtMs);
    return true;
  }

  /** `n` first-time messages are finished (deleted / completed). */
  done(n: number): void {
    if (n <= 0) return;
    this.doneCount += n;
    this.lastDoneAtMs = performance.now();
    this.wakeProducers();
    if (this.doneCount >= this.options.messages && !this.isOver) {
      this.stopTimer();
      this.abort.abort();
      this.settle.resolve();
    }
  }

  /** A producer or consumer hit an error it can't recover from: end the phase with it. */
  fail(err: unknown): void {
    if (this.isOver) return;
    this.failure = err;
    this.stopTimer();
    this.abort.abort();
    this.wakeProducers();
    this.settle.reject(err);
  }

  /** Drives the producers and waits until every message is done (or the phase fails / times out). */
  async run(send: SendBatch): Promise<PhaseResult> {
    this.timer = setTimeout(() => this.fail(new Error(`${this.options.label}: timed out after ${this.options.timeoutMs} ms (${this.doneCount}/${this.options.messages} done, ${this.sent} sent)`)), this.options.timeoutMs);
    const producers =
      this.options.ratePerSecond === undefined
        ? Array.from({ length: this.options.producers }, async () => await this.closedLoopProducer(send))
        : [this.pacedProducer(send, this.options.ratePerSecond)];
    // A producer failure fails the phase; awaiting `finished` first would hide it behind the timeout.
    const producing = Promise.all(producers).catch((err: unknown) => this.fail(err));
    await this.finished;
    await producing;
    return this.result();
  }

  private result(): PhaseResult {
    const elapsedMs = this.lastDoneAtMs - (this.firstSendAtMs ?? this.lastDoneAtMs);
    return {
      label: this.options.label,
      messages: this.options.messages,
      elapsedMs,
      msgsPerSec: elapsedMs > 0 ? (this.doneCount * 1000) / elapsedMs : Number.NaN,
      latency: this.latency.summary(),
      duplicates: this.duplicates,
      lost: this.options.messages - this.distinctReceived,
    };
  }

  private takeBatch(): number[] {
    const start = this.nextSeq;
    const end = Math.min(start + this.options.batchSize, this.options.messages);
    this.nextSeq = end;
    const seqs: number[] = [];
    for (let s = start; s < end; s++) seqs.push(s);
    this.sent += seqs.length;
    return seqs;
  }

  private async closedLoopProducer(send: SendBatch): Promise<void> {
    const batchesMax = Math.ceil(this.options.messages / this.options.batchSize);
    for (let i = 0; i < batchesMax && this.nextSeq < this.options.messages && !this.isOver; i++) {
      await this.waitForRoom();
      if (this.isOver || this.nextSeq >= this.options.messages) return;
      const seqs = this.takeBatch();
      const now = performance.now();
      this.firstSendAtMs ??= now;
      await send(seqs, now);
    }
  }

  private async pacedProducer(send: SendBatch, ratePerSecond: number): Promise<void> {
    const intervalMs = (this.options.batchSize * 1000) / ratePerSecond;
    const batches = Math.ceil(this.options.messages / this.options.batchSize);
    const inflight = new Set<Promise<void>>();
    const startMs = performance.now();
    this.firstSendAtMs = startMs;
    for (let i = 0; i < batches && !this.isOver; i++) {
      const dueMs = startMs + i * intervalMs;
      const waitMs = dueMs - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      if (inflight.size >= pacedInflightMax) await Promise.race(inflight);
      // The scheduled time, not the actual one: a server that stalls the sender is charged for the
      // stall (no coordinated omission).
      const p = send(this.takeBatch(), dueMs).finally(() => inflight.delete(p));
      p.catch((err: unknown) => this.fail(err));
      inflight.add(p);
    }
    await Promise.all(inflight);
  }

  private async waitForRoom(): Promise<void> {
    // Each wake-up is a message finishing, so the number of iterations is bounded by the run size.
    for (let i = 0; i <= this.options.messages; i++) {
      if (this.isOver) return;
      if (this.sent - this.doneCount + this.options.batchSize <= this.options.backlogMax) return;
      if (performance.now() > this.deadlineMs) throw new Error(`${this.options.label}: no progress before the deadline`);
      await new Promise<void>((resolve) => this.progressWaiters.push(resolve));
    }
  }

  private wakeProducers(): void {
    const waiters = this.progressWaiters;
    this.progressWaiters = [];
    for (const w of waiters) w();
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Why the phase failed, if it did. */
  get error(): unknown {
    return this.failure;
  }
}

export async function sleep(ms: number): Promise<void> {
  await new Promise<void>((resolve) => setTimeout(resolve, ms));
}
