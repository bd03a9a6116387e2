/**
 * CPU per message of parts of the SQS path, in one process, where load on a shared machine blurs
 * less than in the bench: receipt handles (made for a receive of ten, checked in a delete batch
 * of ten; and for a receive of one, deleted alone) and the attribute digest of a message with three attributes. Runs at any revision
 * (handles made one by one before encodeAll/decodeAll existed), so a snapshot compares.
 *
 * Usage: npx tsx bench/sqs-parts-cost.ts [rounds, default 3]
 */
import { attributesMd5 } from "../src/core/digests.js";
import type { MessageAttributes } from "../src/core/message.js";
import * as receipt from "../src/core/receipt.js";

interface Codec {
  encode(r: { queueId: number; seq: number; token: string }): string;
  decode(handle: string): unknown;
  encodeAll?(queueId: number, messages: Array<{ seq: number; token: string }>): string[];
  decodeAll?(handles: string[]): unknown[];
}

const rounds = Number(process.argv[2] ?? 3);
const codec = new receipt.ReceiptCodec(receipt.newReceiptSecret()) as unknown as Codec;
const attributes: MessageAttributes = {
  traceId: { dataType: "String", stringValue: "abc-123-def-456" },
  attempt: { dataType: "Number", stringValue: "3" },
  blob: { dataType: "Binary", binaryValue: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) },
};

/** µs of CPU per call of `f`, which handles `perCall` messages: per message. */
function perMessage(calls: number, perCall: number, f: (i: number) => unknown): number {
  for (let i = 0; i < calls / 10; i++) f(i);
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) f(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls / perCall;
}

let seq = 1;
function receiveThenDelete(size: number): void {
  const token = Math.random().toString(36).slice(2, 18).padEnd(16, "x");
  const refs = Array.from({ length: size }, () => ({ seq: seq++, token }));
  const handles = codec.encodeAll ? codec.encodeAll(7, refs) : refs.map((r) => codec.encode({ queueId: 7, ...r }));
  const decoded = codec.decodeAll ? codec.decodeAll(handles) : handles.map((h) => codec.decode(h));
  if (decoded[size - 1] === undefined) throw new Error("a handle did not decode");
}

for (let r = 1; r <= rounds; r++) {
  const receipts = perMessage(20_000, 10, () => receiveThenDelete(10));
  const single = perMessage(100_000, 1, () => receiveThenDelete(1));
  const md5 = perMessage(200_000, 1, () => attributesMd5(attributes));
  console.log(`round ${r}: receipt handles ${receipts.toFixed(2)} µs/msg (by ten), ${single.toFixed(2)} µs/msg (one by one) · attribute MD5 (3 attributes) ${md5.toFixed(2)} µs/msg`);
}
