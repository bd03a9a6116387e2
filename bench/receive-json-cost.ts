/**
 * CPU of a ReceiveMessage's JSON response, as it was written (JSON.stringify of the response
 * value) and as it is (receiveJsonText: bodies that need no escaping copied, not walked), for ten
 * messages of BODY bytes (default 1024, SentTimestamp asked, as the bench's consumers do) with or
 * without characters JSON escapes, or known plain at send (bodyPlain: not scanned); then a SendMessageBatch's and a DeleteMessageBatch's answer
 * of ten both ways. Each with its UTF-8 length taken, as the server does before writing it. Same
 * run, alternating, so the two compare under the same load.
 *
 * Usage: npx tsx bench/receive-json-cost.ts [rounds, default 3]
 */
import { type OutgoingMessage, receiveJson, receiveJsonText } from "../src/protocols/sqs/actions/receive.js";
import { type SendMessageBatchResult, sendBatchJsonText } from "../src/protocols/sqs/actions/send.js";
import { type DeleteMessageBatchResult, deleteBatchJsonText } from "../src/protocols/sqs/actions/delete.js";

const rounds = Number(process.argv[2] ?? 3);
const bodyBytes = Number(process.env.BODY ?? 1024);

function messages(body: (i: number) => string): OutgoingMessage[] {
  return Array.from({ length: 10 }, (_, i) => ({
    messageId: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    receiptHandle: `sl4.AAAAAQAAAAAAAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA${i}`,
    bodyMd5: "b6d81b360a5672d80c27430f39153e2c",
    body: body(i),
    systemAttributes: { SentTimestamp: "1732870000000" },
  }));
}

/** µs of CPU per response. */
function perResponse(calls: number, f: () => string): number {
  let length = 0;
  for (let i = 0; i < calls / 10; i++) length += Buffer.byteLength(f());
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) length += Buffer.byteLength(f());
  const used = process.cpuUsage(start);
  if (length === 0) throw new Error("nothing written");
  return (used.user + used.system) / calls;
}

const cases = {
  plain: messages((i) => "x".repeat(bodyBytes - 2) + String(i).padStart(2, "0")),
  "plain, known at send (bodyPlain)": messages((i) => "x".repeat(bodyBytes - 2) + String(i).padStart(2, "0")).map((m) => ({ ...m, bodyPlain: true })),
  "JSON bodies (quotes)": messages((i) => JSON.stringify({ id: i, text: "x".repeat(bodyBytes - 25) })),
};
/** As the send action builds them: `{ Id, ...result }`, the absent digests and sequence number undefined. */
const sent: SendMessageBatchResult = {
  Successful: Array.from({ length: 10 }, (_, i) => ({
    Id: String(i),
    ...{ MD5OfMessageBody: "b6d81b360a5672d80c27430f39153e2c", MD5OfMessageAttributes: undefined, MD5OfMessageSystemAttributes: undefined, MessageId: `0f1e2d3c-4b5a-7978-8796-a5b4c3d2e1f${i}`, SequenceNumber: undefined },
  })),
  Failed: [],
};
const deleted: DeleteMessageBatchResult = { Successful: Array.from({ length: 10 }, (_, i) => ({ Id: String(i) })), Failed: [] };
for (let r = 0; r < rounds; r++) {
  for (const [name, ms] of Object.entries(cases)) {
    const before = perResponse(20_000, () => JSON.stringify(receiveJson(ms)));
    const after = perResponse(20_000, () => receiveJsonText(ms));
    console.log(`${name}: JSON.stringify ${before.toFixed(2)} µs, receiveJsonText ${after.toFixed(2)} µs per response of 10`);
  }
  const sendBefore = perResponse(100_000, () => JSON.stringify(sent));
  const sendAfter = perResponse(100_000, () => sendBatchJsonText(sent));
  const deleteBefore = perResponse(100_000, () => JSON.stringify(deleted));
  const deleteAfter = perResponse(100_000, () => deleteBatchJsonText(deleted));
  console.log(`send batch answer: JSON.stringify ${sendBefore.toFixed(2)} µs, by hand ${sendAfter.toFixed(2)} µs · delete batch answer: ${deleteBefore.toFixed(2)} → ${deleteAfter.toFixed(2)} µs`);
}
