/**
 * The SQS cycle in one process, no HTTP: rounds of 8 concurrent SendMessageBatch of 10, then 8
 * ReceiveMessage of 10, then 8 DeleteMessageBatch of their handles (each phase one group commit,
 * as under the bench's concurrent clients). Prints CPU per message — the store and core's share
 * of the SQS row, without the server's HTTP and JSON.
 *
 * Usage: npx tsx bench/sqs-inprocess.ts [messages, default 40000]   (BODY=bytes, default 1024;
 *   FIFO=1: a FIFO queue with content-based deduplication, each client sending to a group of its own;
 *   CLIENTS=n, default 8: 1 gives each group commit one request, as on a quiet server)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock, QueueService } from "../src/core/index.js";
import { cryptoIdSource } from "../src/server/ids.js";
import { openSqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { cpuPerMessageRound } from "./cpu-per-call.js";

const messagesWanted = Number(process.argv[2] ?? 40_000);
const clients = Number(process.env.CLIENTS ?? 8);
const batch = 10;
const dir = mkdtempSync(join(tmpdir(), "sluice-sqs-inprocess-"));
const store = openSqliteStore({ filename: join(dir, "s.db"), pipelinedSync: true });
const queues = new QueueService({ store, clock: systemClock, ids: cryptoIdSource(), senderId: "bench" });
const fifo = process.env.FIFO === "1";
const { queue } = await queues.createQueue("", { name: fifo ? "q.fifo" : "q", config: fifo ? { fifoQueue: true, contentBasedDeduplication: true } : {} });
const body = "x".repeat(Number(process.env.BODY ?? 1024));
let sent = 0;
/** FIFO: bodies differ (content-based deduplication would drop repeats). */
const entries = (client: number) => Array.from({ length: batch }, () => (fifo ? { body: `${body}${sent++}`, groupId: `g${client}` } : { body }));

async function cycle(): Promise<number> {
  await Promise.all(Array.from({ length: clients }, (_, c) => queues.sendMessages(queue, entries(c))));
  const received = await Promise.all(Array.from({ length: clients }, () => queues.receiveMessages(queue, { maxMessages: batch, waitTimeSeconds: 0 })));
  await Promise.all(received.map((got) => queues.deleteMessages(queue, got.map((m) => m.receiptHandle))));
  return received.reduce((n, got) => n + got.length, 0);
}

for (let i = 0; i < 50; i++) await cycle(); // warm-up
console.log(await cpuPerMessageRound(messagesWanted, cycle));
await store.close();
rmSync(dir, { recursive: true, force: true });
