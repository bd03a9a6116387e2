/**
 * CPU of a ReceiveMessage's JSON response, as it was written (JSON.stringify of the response
 * value) and as it is (receiveJsonText: bodies that need no escaping copied, not walked), for ten
 * messages of BODY bytes (default 1024) with or without characters JSON escapes. Same run,
 * alternating, so the two compare under the same load.
 *
 * Usage: npx tsx bench/receive-json-cost.ts [rounds, default 3]
 */
import { type OutgoingMessage, receiveJson, receiveJsonText } from "../src/protocols/sqs/actions/receive.js";

const rounds = Number(process.argv[2] ?? 3);
const bodyBytes = Number(process.env.BODY ?? 1024);

function messages(body: (i: number) => string): OutgoingMessage[] {
  return Array.from({ length: 10 }, (_, i) => ({
    messageId: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    receiptHandle: `sl4.AAAAAQAAAAAAAAABAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA${i}`,
    bodyMd5: "b6d81b360a5672d80c27430f39153e2c",
    body: body(i),
  }));
}

/** µs of CPU per response. */
function perResponse(calls: number, f: () => string): number {
  let length = 0;
  for (let i = 0; i < calls / 10; i++) length += f().length;
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) length += f().length;
  const used = process.cpuUsage(start);
  if (length === 0) throw new Error("nothing written");
  return (used.user + used.system) / calls;
}

const cases = {
  plain: messages((i) => "x".repeat(bodyBytes - 2) + String(i).padStart(2, "0")),
  "JSON bodies (quotes)": messages((i) => JSON.stringify({ id: i, text: "x".repeat(bodyBytes - 25) })),
};
for (let r = 0; r < rounds; r++) {
  for (const [name, ms] of Object.entries(cases)) {
    const before = perResponse(20_000, () => JSON.stringify(receiveJson(ms)));
    const after = perResponse(20_000, () => receiveJsonText(ms));
    console.log(`${name}: JSON.stringify ${before.toFixed(2)} µs, receiveJsonText ${after.toFixed(2)} µs per response of 10`);
  }
}
