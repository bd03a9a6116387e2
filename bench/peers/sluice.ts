/**
 * Sluice over the SQS JSON protocol: producers SendMessageBatch (10 × 1 KiB), consumers long-poll
 * ReceiveMessage (10) → DeleteMessageBatch, like an SQS worker fleet. A standard queue here; other
 * queue kinds (FIFO: sluice-fifo.ts) reuse the same row with a `SqsQueueKind`.
 */
import { performance } from "node:perf_hooks";
import { startCpuMeter } from "../cpu.js";
import { makeBody, parseBody } from "../payload.js";
import { Phase } from "../phase.js";
import type { PhaseOptions, PhaseResult } from "../phase.js";
import type { Row, RowContext, RowResult, Workload } from "../row.js";
import { LeanSqsClient } from "../sqs-client.js";
import { completeResult, startRowServer, withServerOutput } from "./sluice-row-server.js";
import { type SplitMeter, startSplitMeter } from "./time-split-meter.js";

/** What sets a Sluice SQS row apart from the standard one: queue type and per-message send fields. */
export interface SqsQueueKind {
  label: string;
  /** Prefix of log lines and phase labels, e.g. "sluice". */
  tag: string;
  /** The queue name for a phase ("bench-main" → "bench-main.fifo" on FIFO). */
  queueName(base: string): string;
  attributes?: Record<string, string>;
  /** Extra SendMessageBatch entry fields for message #seq (MessageGroupId, MessageDeduplicationId). */
  entryFields?: (seq: number) => Record<string, string>;
  notes: string[];
}

export const sluiceStandardRow: Row = sluiceSqsRow({ label: "Sluice (SQLite WAL, fsync before ack)", tag: "sluice", queueName: (base) => base, notes: [] });

export function sluiceSqsRow(kind: SqsQueueKind): Row {
  const { tag } = kind;
  const createQueue = (client: LeanSqsClient, base: string): Promise<string> => client.createQueue(kind.queueName(base), kind.attributes);
  return {
    peer: "sluice",
    label: kind.label,
    async run(ctx: RowContext): Promise<RowResult> {
      const w = ctx.workload;
      const rs = await startRowServer(ctx, tag);
      const { server } = rs;
      // One connection per producer and consumer (each has at most one request in flight), plus spare.
      const client = new LeanSqsClient(server.url, w.producers + w.consumers + 2);
      let result: RowResult;
      let split: SplitMeter | undefined;
      try {
        const warmUrl = await createQueue(client, "bench-warmup");
        await runSqsPhase([{ client, queueUrl: warmUrl }], w, { label: `${tag} warm-up`, messages: w.warmupMessages }, kind.entryFields);

        const mainUrl = await createQueue(client, "bench-main");
        ctx.log(`${tag}: measuring ${w.messages} messages…`);
        const stopMeter = startCpuMeter(server.pid);
        split = startSplitMeter(ctx, tag, server.pid);
        const saturated = await runSqsPhase([{ client, queueUrl: mainUrl }], w, { label: `${tag} saturated`, messages: w.messages }, kind.entryFields);
        split.stop();
        const cpu = stopMeter();
        const rss = server.rssMiB();

        let paced: PhaseResult | undefined;
        if (w.pacedMessages > 0) {
          const pacedUrl = await createQueue(client, "bench-paced");
          ctx.log(`${tag}: paced latency run at ${w.pacedRatePerSec} msgs/s…`);
          paced = await runSqsPhase([{ client, queueUrl: pacedUrl }], w, { label: `${tag} paced`, messages: w.pacedMessages, ratePerSecond: w.pacedRatePerSec }, kind.entryFields);
        }
        result = completeResult({ peer: "sluice", label: this.label, durability: "SQLite WAL, fdatasync of the WAL before every acknowledgement (server default: pipelined sync)", saturated, cpu, notes: [...kind.notes] }, rs, paced, rss);
      } catch (err) {
        throw withServerOutput(err, rs);
      } finally {
        await client.close();
        await rs.stop();
      }
      split?.attach(result, w.messages);
      return result;
    },
  };
}

/** Where a producer or consumer sends its requests: one node's client and the queue's URL there. */
export interface SqsTarget {
  client: LeanSqsClient;
  queueUrl: string;
}

/** Producers take turns over the targets (nodes); consumer i polls target i mod n. */
export async function runSqsPhase(
  targets: readonly SqsTarget[],
  w: Workload,
  p: Pick<PhaseOptions, "label" | "messages" | "ratePerSecond">,
  entryFields?: SqsQueueKind["entryFields"],
): Promise<PhaseResult> {
  const list = targets;
  const phase = new Phase({
    batchSize: w.batchSize,
    producers: w.producers,
    backlogMax: w.backlogMax,
    timeoutMs: w.phaseTimeoutMs,
    ...p,
  });
  const consumers = Array.from({ length: w.consumers }, async (_, i) => {
    const target = list[i % list.length]!;
    try {
      await consume(target.client, target.queueUrl, phase, w.waitTimeSeconds);
    } catch (err) {
      phase.fail(err);
    }
  });
  let turn = 0;
  try {
    return await phase.run(async (seqs, sentAtMs) => {
      const target = list[turn++ % list.length]!;
      await target.client.sendBatch(target.queueUrl, seqs.map((seq) => makeBody(seq, sentAtMs, w.bodyBytes)), entryFields && seqs.map(entryFields));
    });
  } finally {
    await Promise.all(consumers);
  }
}

async function consume(client: LeanSqsClient, queueUrl: string, phase: Phase, waitSeconds: number): Promise<void> {
  // Bounded: every useful iteration consumes ≥ 1 message, and an empty one costs up to
  // waitSeconds — so this is more than enough for any phase that finishes before its timeout.
  const iterationsMax = phase.options.messages + Math.ceil(phase.options.timeoutMs / 10);
  for (let i = 0; i < iterationsMax && !phase.isOver; i++) {
    let messages;
    try {
      messages = await client.receive(queueUrl, 10, waitSeconds, phase.signal);
    } catch (err) {
      if (phase.isOver) return; // our own abort of a parked long poll at the end of the phase
      throw err;
    }
    if (messages.length === 0) continue;
    const now = performance.now();
    let fresh = 0;
    for (const m of messages) {
      const { seq, sentAtMs } = parseBody(m.Body);
      if (phase.received(seq, sentAtMs, now)) fresh++;
    }
    await client.deleteBatch(queueUrl, messages.map((m) => m.ReceiptHandle));
    phase.done(fresh);
  }
}
