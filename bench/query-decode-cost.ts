/**
 * CPU per decode of query-protocol requests as aws-sdk v2 spells them, in-process: form parsing
 * plus the shape walk (which also refuses parameters no action reads).
 * `npx tsx bench/query-decode-cost.ts [requests]` (docs/benchmarks-history.md, "Request-path CPU").
 */
import { queryParams } from "../src/protocols/sqs/detect-protocol.js";
import { decodeQueryInput } from "../src/protocols/sqs/query-codec.js";
import { cpuMicrosPer } from "./cpu-per-call.js";

const queueUrl = encodeURIComponent("http://127.0.0.1:9324/000000000000/bench");
const handle = "sl3%3A1%3A123456%3AAbCdEfGhIjKlMnOp%3A0123456789abcdefghijkl";
const body1k = "x".repeat(1024);
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
const forms: Record<string, string> = {
  "SendMessageBatch of 10 × 1 KiB": `Action=SendMessageBatch&Version=2012-11-05&QueueUrl=${queueUrl}&` + range(10).map((i) => `SendMessageBatchRequestEntry.${i}.Id=m${i}&SendMessageBatchRequestEntry.${i}.MessageBody=${body1k}`).join("&"),
  "SendMessage with 2 attributes": `Action=SendMessage&Version=2012-11-05&QueueUrl=${queueUrl}&MessageBody=hello&MessageAttribute.1.Name=a&MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=x&MessageAttribute.2.Name=b&MessageAttribute.2.Value.DataType=Number&MessageAttribute.2.Value.StringValue=1`,
  ReceiveMessage: `Action=ReceiveMessage&Version=2012-11-05&QueueUrl=${queueUrl}&MaxNumberOfMessages=10&WaitTimeSeconds=2&AttributeName.1=All&MessageAttributeName.1=All`,
  "DeleteMessageBatch of 10": `Action=DeleteMessageBatch&Version=2012-11-05&QueueUrl=${queueUrl}&` + range(10).map((i) => `DeleteMessageBatchRequestEntry.${i}.Id=m${i}&DeleteMessageBatchRequestEntry.${i}.ReceiptHandle=${handle}`).join("&"),
};

function decode(form: string): unknown {
  const { action, params } = queryParams({ rawQuery: "", body: form, contentType: "application/x-www-form-urlencoded; charset=utf-8" });
  return decodeQueryInput(action, params);
}

const n = Number(process.argv[2] ?? 20_000);
for (const [name, form] of Object.entries(forms)) {
  const rounds: string[] = [];
  for (let round = 0; round < 5; round++) rounds.push(cpuMicrosPer(n, () => decode(form)).toFixed(2));
  console.log(`${name} (${form.length} chars): µs CPU per parse + decode, 5 rounds: ${rounds.join(", ")}`);
}
