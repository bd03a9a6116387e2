/**
 * The SQS cycle through the JSON protocol's handler in one process, no sockets: rounds of 8
 * concurrent SendMessageBatch of 10, 8 ReceiveMessage of 10 (SentTimestamp asked, as the bench's
 * consumers do), 8 DeleteMessageBatch of their handles, each as the request bytes the bench's
 * client sends. Prints CPU per message: bench/sqs-inprocess.ts plus the protocol layer (decode,
 * validation, URL and account scope, encoding), without node:http. The client's part (building
 * the delete bodies, parsing the receive answers) is in the figure too, the same at every revision.
 *
 * Usage: npx tsx bench/sqs-handler-inprocess.ts [messages, default 40000] [rounds, default 1]
 *   (BODY=bytes, default 1024; WARMUP_CYCLES, default 200, of 80 messages each: fewer under callgrind)
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QueueService, systemClock } from "../src/core/index.js";
import { createSqsHandler } from "../src/protocols/sqs/index.js";
import { cryptoIdSource } from "../src/server/ids.js";
import { openSqliteStore } from "../src/stores/sqlite/sqlite-store.js";
import { cpuPerMessageRound } from "./cpu-per-call.js";

const messagesWanted = Number(process.argv[2] ?? 40_000);
const rounds = Number(process.argv[3] ?? 1);
const clients = 8;
const batch = 10;
const dir = mkdtempSync(join(tmpdir(), "sluice-sqs-handler-"));
const store = openSqliteStore({ filename: join(dir, "s.db"), pipelinedSync: true });
const queues = new QueueService({ store, clock: systemClock, ids: cryptoIdSource(), senderId: "bench" });
const handle = createSqsHandler({ queues, accountId: "000000000000", region: "us-east-1" });
await queues.createQueue("", { name: "q", config: {} });
const queueUrl = "http://127.0.0.1:9324/000000000000/q";
const body = "x".repeat(Number(process.env.BODY ?? 1024));

function headersFor(action: string, length: number): IncomingHttpHeaders {
  return { host: "127.0.0.1:9324", connection: "keep-alive", "content-type": "application/x-amz-json-1.0", "x-amz-target": `AmazonSQS.${action}`, "content-length": String(length) };
}

async function call(action: string, payload: Buffer): Promise<string> {
  const signal = (): AbortSignal => new AbortController().signal;
  const res = await handle({ method: "POST", url: "/", headers: headersFor(action, payload.length), body: payload, onQueuePath: false }, signal);
  if (res.status !== 200) throw new Error(`${action}: ${res.status} ${res.body.slice(0, 300)}`);
  return res.body;
}

const sendBody = Buffer.from(JSON.stringify({ QueueUrl: queueUrl, Entries: Array.from({ length: batch }, (_, i) => ({ Id: String(i), MessageBody: body })) }));
const receiveBody = Buffer.from(JSON.stringify({ QueueUrl: queueUrl, MaxNumberOfMessages: batch, WaitTimeSeconds: 0, MessageSystemAttributeNames: ["SentTimestamp"] }));

async function cycle(): Promise<number> {
  await Promise.all(Array.from({ length: clients }, () => call("SendMessageBatch", sendBody)));
  const received = await Promise.all(
    Array.from({ length: clients }, async () => (JSON.parse(await call("ReceiveMessage", receiveBody)) as { Messages?: Array<{ ReceiptHandle: string }> }).Messages ?? []),
  );
  await Promise.all(
    received.map((got) => call("DeleteMessageBatch", Buffer.from(JSON.stringify({ QueueUrl: queueUrl, Entries: got.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) })))),
  );
  return received.reduce((n, got) => n + got.length, 0);
}

const warmupCycles = Number(process.env.WARMUP_CYCLES ?? 200);
for (let i = 0; i < warmupCycles; i++) await cycle();
for (let r = 1; r <= rounds; r++) console.log(`round ${r}: ${await cpuPerMessageRound(messagesWanted, cycle)}`);
await store.close();
rmSync(dir, { recursive: true, force: true });
