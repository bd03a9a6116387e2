/**
 * RabbitMQ with the same durable work as Sluice's SQS row: a quorum queue (Raft log fsynced
 * before a publisher confirm), persistent messages, manual acks. Mapping of the SQS workload:
 * a producer's SendMessageBatch of 10 is 10 publishes on its own confirm channel, then waiting for
 * their confirms; 64 consumers × 10 messages in flight become ⌈640 / 100⌉ = 7 consumer channels
 * with prefetch 100; a DeleteMessageBatch is one multiple-ack of up to 10 deliveries.
 */
import { performance } from "node:perf_hooks";
import { loadAmqplib } from "../amqp.js";
import type { AmqpConfirmChannel, AmqpConnection, AmqpMessage } from "../amqp.js";
import { startCpuMeter } from "../cpu.js";
import { makeBody, parseBody } from "../payload.js";
import { Phase } from "../phase.js";
import type { PhaseOptions, PhaseResult } from "../phase.js";
import { startRabbit } from "../rabbitmq.js";
import type { RabbitServer } from "../rabbitmq.js";
import type { Row, RowContext, RowResult, Workload } from "../row.js";

export const rabbitPrefetch = 100;
/** TCP connections the channels are spread over: one would serialise every frame through one socket. */
const connectionCount = 4;

export const rabbitDurability = "quorum queue (Raft WAL fsynced before each publisher confirm), persistent messages, manual acks";

/** AMQP consumers giving the same messages in flight as the SQS row's consumers × batch size. */
export function rabbitConsumers(w: Pick<Workload, "consumers" | "batchSize">): number {
  return Math.max(1, Math.ceil((w.consumers * w.batchSize) / rabbitPrefetch));
}

export const rabbitmqRow: Row = {
  peer: "rabbitmq",
  label: "RabbitMQ quorum queue (publish 10 → confirms; prefetch 100, manual acks)",
  async run(ctx: RowContext): Promise<RowResult> {
    const w = ctx.workload;
    const rabbit = await startRabbit(ctx.log);
    ctx.log(`rabbitmq: rabbitmq-server pid ${rabbit.pid} at ${rabbit.url.replace(/\/\/[^@]*@/, "//")} (${rabbit.version})`);
    const conns = await openConnections(ctx, rabbit);
    try {
      await runRabbitPhase(conns, "bench-warmup", w, { label: "rabbitmq warm-up", messages: w.warmupMessages });
      ctx.log(`rabbitmq: measuring ${w.messages} messages…`);
      const stopMeter = startCpuMeter(() => rabbit.cpuSeconds());
      const saturated = await runRabbitPhase(conns, "bench-main", w, { label: "rabbitmq saturated", messages: w.messages });
      const cpu = stopMeter();
      const rss = rabbit.rssMiB();
      let paced: PhaseResult | undefined;
      if (w.pacedMessages > 0) {
        ctx.log(`rabbitmq: paced latency run at ${w.pacedRatePerSec} msgs/s…`);
        paced = await runRabbitPhase(conns, "bench-paced", w, { label: "rabbitmq paced", messages: w.pacedMessages, ratePerSecond: w.pacedRatePerSec });
      }
      const result: RowResult = {
        peer: "rabbitmq",
        label: this.label,
        durability: rabbitDurability,
        version: `${rabbit.version}; amqplib`,
        saturated,
        cpu,
        notes: [
          `${w.producers} publishers, each on its own confirm channel: ${w.batchSize} publishes then wait for their confirms (≙ SendMessageBatch); ${rabbitConsumers(w)} consumers with prefetch ${rabbitPrefetch} (≙ ${w.consumers} SQS consumers × ${w.batchSize} in flight); one multiple-ack per ≤ ${w.batchSize} deliveries (≙ DeleteMessageBatch); ${connectionCount} connections`,
          "server CPU is the broker's process tree (beam.smp and its helpers)",
        ],
      };
      if (paced !== undefined) result.paced = paced;
      if (rss !== undefined) result.serverRssMiB = rss;
      return result;
    } catch (err) {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- rabbitmq output (tail) ---\n${rabbit.output()}`, { cause: err });
    } finally {
      await Promise.allSettled(conns.map((c) => c.close()));
      await rabbit.stop();
    }
  },
};

export async function openConnections(ctx: Pick<RowContext, "repoRoot" | "log">, rabbit: RabbitServer): Promise<AmqpConnection[]> {
  const { connect } = await loadAmqplib(ctx.repoRoot, ctx.log);
  const conns: AmqpConnection[] = [];
  try {
    // noDelay: amqplib leaves Nagle on, which holds small frames (confirms, acks) for tens of ms.
    for (let i = 0; i < connectionCount; i++) conns.push(await connect(rabbit.url, { noDelay: true }));
  } catch (err) {
    await Promise.allSettled(conns.map((c) => c.close()));
    throw err;
  }
  return conns;
}

/** Declares a durable quorum queue named `name` (on a short-lived channel). */
export async function declareQuorumQueue(conn: AmqpConnection, name: string): Promise<void> {
  const ch = await conn.createChannel();
  try {
    await ch.assertQueue(name, { durable: true, arguments: { "x-queue-type": "quorum" } });
  } finally {
    await ch.close();
  }
}

/** Confirm channels for publishers: each send takes a free one, so one batch's confirms are awaited alone. */
export class PublisherPool {
  private readonly free: AmqpConfirmChannel[] = [];
  private readonly all: AmqpConfirmChannel[] = [];

  static async open(conns: readonly AmqpConnection[], size: number): Promise<PublisherPool> {
    const pool = new PublisherPool();
    for (let i = 0; i < size; i++) {
      const ch = await conns[i % conns.length]!.createConfirmChannel();
      pool.free.push(ch);
      pool.all.push(ch);
    }
    return pool;
  }

  /** Publishes every body persistently to `queue` and resolves when the broker confirmed them all. */
  async publish(queue: string, bodies: readonly Buffer[]): Promise<void> {
    const ch = this.free.pop();
    if (ch === undefined) throw new Error("more concurrent publishes than publisher channels");
    try {
      for (const body of bodies) ch.sendToQueue(queue, body, { persistent: true });
      await ch.waitForConfirms();
    } finally {
      this.free.push(ch);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all.map((ch) => ch.close()));
  }
}

async function runRabbitPhase(conns: readonly AmqpConnection[], queue: string, w: Workload, p: Pick<PhaseOptions, "label" | "messages" | "ratePerSecond">): Promise<PhaseResult> {
  const phase = new Phase({ batchSize: w.batchSize, producers: w.producers, backlogMax: w.backlogMax, timeoutMs: w.phaseTimeoutMs, ...p });
  await declareQuorumQueue(conns[0]!, queue);
  const publishers = await PublisherPool.open(conns, p.ratePerSecond === undefined ? w.producers : 64);
  const consumers = [];
  try {
    for (let i = 0; i < rabbitConsumers(w); i++) {
      consumers.push(
        await startConsumer(conns[(i + 1) % conns.length]!, queue, w.batchSize, (msg) => {
          const { seq, sentAtMs } = parseBody(msg.content.toString("latin1"));
          return phase.received(seq, sentAtMs, performance.now());
        }, (fresh) => phase.done(fresh), (err) => phase.fail(err)),
      );
    }
    return await phase.run(async (seqs, sentAtMs) => {
      await publishers.publish(queue, seqs.map((seq) => Buffer.from(makeBody(seq, sentAtMs, w.bodyBytes), "latin1")));
    });
  } finally {
    await Promise.allSettled(consumers.map((c) => c.close()));
    await publishers.close();
  }
}

export interface RabbitConsumer {
  close(): Promise<void>;
}

/**
 * A consumer on its own channel (prefetch 100, manual acks). Deliveries are acked together — one
 * multiple-ack per `ackEvery` deliveries, or at the end of the event-loop turn that brought them.
 * `onMessage` returns whether the message was new; `onAcked(n)` gets the new ones once acked.
 */
export async function startConsumer(
  conn: AmqpConnection,
  queue: string,
  ackEvery: number,
  onMessage: (msg: AmqpMessage) => boolean,
  onAcked: (fresh: number) => void,
  onError: (err: unknown) => void,
): Promise<RabbitConsumer> {
  const ch = await conn.createChannel();
  await ch.prefetch(rabbitPrefetch);
  let last: AmqpMessage | undefined;
  let pending = 0;
  let fresh = 0;
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (last === undefined) return;
    ch.ack(last, true);
    const n = fresh;
    last = undefined;
    pending = 0;
    fresh = 0;
    onAcked(n);
  };
  const { consumerTag } = await ch.consume(queue, (msg) => {
    if (msg === null) return; // the broker cancelled the consumer (queue deleted)
    try {
      if (onMessage(msg)) fresh++;
    } catch (err) {
      onError(err);
    }
    last = msg;
    if (++pending >= ackEvery) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  }, { noAck: false });
  ch.on("error", onError);
  return {
    async close() {
      flush();
      await ch.cancel(consumerTag).catch(() => undefined);
      await ch.close().catch(() => undefined);
    },
  };
}
