/**
 * The burst (bench/burst.ts) on a RabbitMQ quorum queue, mapped as in bench/peers/rabbitmq.ts:
 * publish 10 then wait for confirms; consumers with prefetch 100 (as many in flight as 16 SQS
 * consumers × 10); the probe publishes one message with a confirm, basic.gets and acks it on its
 * own quorum queue; the backlog count is a passive queue.declare (its message count).
 */
import { type BurstPeer, dirBytes, runBurst } from "../burst.js";
import { startRabbit } from "../rabbitmq.js";
import type { Row, RowContext, RowResult } from "../row.js";
import { burstOptions, burstRowResult } from "./burst-row.js";
import { PublisherPool, type RabbitConsumer, declareQuorumQueue, openConnections, rabbitConsumers, rabbitDurability, rabbitPrefetch, startConsumer } from "./rabbitmq.js";

/** basic.get polls for the probe's own message (there at once after its confirm, on a healthy broker). */
const probeGetsMax = 1_000;

export const rabbitmqBurstRow: Row = {
  peer: "rabbitmq",
  label: "RabbitMQ quorum queue (confirms, prefetch 100, manual acks)",
  async run(ctx: RowContext): Promise<RowResult> {
    const o = burstOptions(ctx.workload);
    const rabbit = await startRabbit(ctx.log);
    const conns = await openConnections(ctx, rabbit);
    let publishers: PublisherPool | undefined;
    try {
      await declareQuorumQueue(conns[0]!, "burst");
      await declareQuorumQueue(conns[0]!, "burst-probe");
      publishers = await PublisherPool.open(conns, o.producers);
      const pool = publishers;
      // The probe and the count on the last connection: the drain's consumers use the others.
      const side = conns[conns.length - 1]!;
      const probeCh = await side.createConfirmChannel();
      const countCh = await side.createChannel();
      const amqpConsumers = rabbitConsumers({ consumers: o.consumers, batchSize: o.batchSize });
      const peer: BurstPeer = {
        send: (bodies) => pool.publish("burst", bodies.map((b) => Buffer.from(b, "latin1"))),
        async drain(_consumers, onRemoved, signal) {
          const started: RabbitConsumer[] = [];
          let failure: unknown;
          const fail = (err: unknown): void => {
            failure ??= err;
            stop();
          };
          let stop = (): void => undefined;
          const stopped = new Promise<void>((resolve) => {
            stop = resolve;
            signal.addEventListener("abort", () => resolve(), { once: true });
          });
          try {
            for (let i = 0; i < amqpConsumers; i++) {
              let bodies: string[] = [];
              started.push(
                await startConsumer(conns[i % (conns.length - 1)]!, "burst", o.batchSize, (msg) => {
                  bodies.push(msg.content.toString("latin1"));
                  return true;
                }, () => {
                  const done = bodies;
                  bodies = [];
                  try {
                    onRemoved(done);
                  } catch (err) {
                    fail(err);
                  }
                }, fail),
              );
            }
            await stopped;
          } finally {
            await Promise.allSettled(started.map((c) => c.close()));
          }
          if (failure !== undefined) throw failure;
        },
        async probe() {
          probeCh.sendToQueue("burst-probe", Buffer.from("probe"), { persistent: true });
          await probeCh.waitForConfirms();
          for (let i = 0; i < probeGetsMax; i++) {
            const msg = await probeCh.get("burst-probe", { noAck: false });
            if (msg === false) continue;
            probeCh.ack(msg);
            return;
          }
          throw new Error("probe message not received");
        },
        async countBacklog() {
          return (await countCh.checkQueue("burst")).messageCount;
        },
        rssMiB: () => rabbit.rssMiB(),
        diskBytes: () => dirBytes(rabbit.dataDir),
      };
      const burst = await runBurst(peer, o, (line) => ctx.log(`rabbitmq-${line}`));
      return burstRowResult({
        peer: "rabbitmq",
        label: this.label,
        durability: rabbitDurability,
        burst,
        version: rabbit.version,
        notes: [`drain: ${amqpConsumers} consumers × prefetch ${rabbitPrefetch} (≙ ${o.consumers} SQS consumers × ${o.batchSize}); RSS: the broker's process tree; disk: its node directory`],
      });
    } catch (err) {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- rabbitmq output (tail) ---\n${rabbit.output()}`, { cause: err });
    } finally {
      await publishers?.close();
      await Promise.allSettled(conns.map((c) => c.close()));
      await rabbit.stop();
    }
  },
};
