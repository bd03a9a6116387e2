/**
 * The burst (bench/burst.ts) on Sluice over the SQS JSON protocol: producers SendMessageBatch
 * (10), consumers long-poll ReceiveMessage (10) → DeleteMessageBatch; the probe is SendMessage,
 * ReceiveMessage and DeleteMessage on its own queue and connection; the backlog count is
 * GetQueueAttributes(ApproximateNumberOfMessages).
 */
import { type BurstPeer, dirBytes, runBurst } from "../burst.js";
import type { Row, RowContext, RowResult } from "../row.js";
import { LeanSqsClient } from "../sqs-client.js";
import { burstOptions, burstRowResult } from "./burst-row.js";
import { startRowServer, withServerOutput } from "./sluice-row-server.js";

/** Receives on the probe queue until its message shows (at once, on a healthy server). */
const probeReceivesMax = 5;

export const sluiceBurstRow: Row = {
  peer: "sluice",
  label: "Sluice (SQLite WAL, fsync before ack)",
  async run(ctx: RowContext): Promise<RowResult> {
    const o = burstOptions(ctx.workload);
    const rs = await startRowServer(ctx, "sluice-burst");
    const { server } = rs;
    const client = new LeanSqsClient(server.url, o.producers + o.consumers + 2);
    // Its own connection: the probe must not queue behind the fill's requests in the client.
    const probeClient = new LeanSqsClient(server.url, 1);
    try {
      const burstUrl = await client.createQueue("burst");
      const probeUrl = await client.createQueue("burst-probe");
      const peer: BurstPeer = {
        send: (bodies) => client.sendBatch(burstUrl, bodies),
        async drain(consumers, onRemoved, signal) {
          await Promise.all(
            Array.from({ length: consumers }, async () => {
              while (!signal.aborted) {
                let messages;
                try {
                  messages = await client.receive(burstUrl, 10, 1, signal);
                } catch (err) {
                  if (signal.aborted) return;
                  throw err;
                }
                if (messages.length === 0) continue;
                await client.deleteBatch(burstUrl, messages.map((m) => m.ReceiptHandle));
                onRemoved(messages.map((m) => m.Body));
              }
            }),
          );
        },
        async probe() {
          await probeClient.call("SendMessage", { QueueUrl: probeUrl, MessageBody: "probe" });
          for (let i = 0; i < probeReceivesMax; i++) {
            const [m] = await probeClient.receive(probeUrl, 1, 1);
            if (m === undefined) continue;
            await probeClient.call("DeleteMessage", { QueueUrl: probeUrl, ReceiptHandle: m.ReceiptHandle });
            return;
          }
          throw new Error("probe message not received");
        },
        async countBacklog() {
          const out = await client.call<{ Attributes?: Record<string, string> }>("GetQueueAttributes", { QueueUrl: burstUrl, AttributeNames: ["ApproximateNumberOfMessages"] });
          return Number(out.Attributes?.ApproximateNumberOfMessages);
        },
        rssMiB: () => server.rssMiB(),
        diskBytes: () => dirBytes(server.dataDir),
      };
      const burst = await runBurst(peer, o, (line) => ctx.log(`sluice-${line}`));
      return burstRowResult({ peer: "sluice", label: this.label, durability: "SQLite WAL, fdatasync before every acknowledgement", burst, version: rs.version, notes: ["disk: the data dir (database, WAL and shared memory) after the idle spell"] });
    } catch (err) {
      throw withServerOutput(err, rs);
    } finally {
      await Promise.all([client.close(), probeClient.close()]);
      await rs.stop();
    }
  },
};
