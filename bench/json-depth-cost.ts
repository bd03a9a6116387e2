/**
 * CPU per decode of the SQS bench row's JSON bodies, in-process: the decoder as it is (parse, then
 * the depth walk on the value) against measuring the text first (a scan of every character, then
 * the parse), as it did before. `npx tsx bench/json-depth-cost.ts [requests]`
 * (docs/benchmarks-history.md, "Request-path CPU").
 */
import { jsonTooDeep } from "../src/protocols/http/json-depth.js";
import { decodeJsonInput } from "../src/protocols/sqs/json-codec.js";
import { cpuMicrosPer } from "./cpu-per-call.js";

const queueUrl = "http://127.0.0.1:9324/000000000000/bench";
const handle = "sl4:1:123456:AbCdEfGhIjKlMnOp:0123456789abcdef";
const bodies: Record<string, string> = {
  "SendMessageBatch of 10 × 1 KiB": JSON.stringify({ QueueUrl: queueUrl, Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: "x".repeat(1024) })) }),
  ReceiveMessage: JSON.stringify({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2 }),
  "DeleteMessageBatch of 10": JSON.stringify({ QueueUrl: queueUrl, Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, ReceiptHandle: handle })) }),
};

function textFirst(body: string): unknown {
  if (jsonTooDeep(body)) throw new Error("too deep");
  return JSON.parse(body);
}

const n = Number(process.argv[2] ?? 20_000);
for (const [name, body] of Object.entries(bodies)) {
  const rounds: string[] = [];
  for (let round = 0; round < 3; round++) {
    const before = cpuMicrosPer(n, () => textFirst(body));
    const now = cpuMicrosPer(n, () => decodeJsonInput(body));
    rounds.push(`${before.toFixed(1)} → ${now.toFixed(1)}`);
  }
  console.log(`${name} (${body.length} chars): µs CPU per decode, text scan + parse → parse + value walk: ${rounds.join(", ")}`);
}
