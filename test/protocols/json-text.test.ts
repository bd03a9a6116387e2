/**
 * The receive response's JSON written by hand (bodies without JSON.stringify's walk when they need
 * no escaping), and the send and delete batches' answers, must be the very bytes JSON.stringify
 * wrote: compared on random texts full of what JSON escapes or keeps (quotes, backslashes,
 * controls, lone and paired surrogates, U+2028).
 */
import { describe, expect, it } from "vitest";
import { jsonString } from "../../src/protocols/sqs/json-text.js";
import { type OutgoingMessage, receiveJson, receiveJsonText } from "../../src/protocols/sqs/actions/receive.js";
import { type SendMessageBatchResult, sendBatchJsonText, sendJsonText } from "../../src/protocols/sqs/actions/send.js";
import { type DeleteMessageBatchResult, deleteBatchJsonText } from "../../src/protocols/sqs/actions/delete.js";
import type { BatchResultErrorEntry } from "../../src/protocols/sqs/actions/batch.js";
import { seededRandom } from "../crash/jobs-crash-kit.js";

const pieces = ["x", "plain text ", '"', "\\", "\n", "\t", "\r", "\u0000", "\u001f", "\u007f", "\ud83d\ude00", "\ud800", "\udfff", "\u2028", "é", "{}", "</Body>", "\uFFFD"];

function randomText(random: () => number): string {
  const n = Math.floor(random() * 12);
  let out = "";
  // Mostly texts that need no escaping, so both ways of writing are exercised.
  const pool = random() < 0.5 ? pieces.slice(0, 2) : pieces;
  for (let i = 0; i < n; i++) out += pool[Math.floor(random() * pool.length)]!;
  return out;
}

function randomMessage(random: () => number, i: number): OutgoingMessage {
  const m: OutgoingMessage = { messageId: `id-${i}`, receiptHandle: `sl4.${randomText(random)}`, bodyMd5: "0123456789abcdef0123456789abcdef", body: randomText(random) };
  // As a send knows it (NewMessage.bodyPlain): only of ASCII from U+0020 up, without quotes or backslashes.
  if (/^[\x20-\x7f]*$/.test(m.body) && !/["\\]/.test(m.body) && random() < 0.5) m.bodyPlain = true;
  if (random() < 0.5) m.systemAttributes = { SentTimestamp: "1732870000000", SenderId: randomText(random) };
  if (random() < 0.3) {
    m.attributes = { [`a${randomText(random)}`]: { dataType: "String", stringValue: randomText(random) }, bin: { dataType: "Binary", binaryValue: new Uint8Array([0, 1, 255]) } };
    m.attributesMd5 = "fedcba9876543210fedcba9876543210";
  }
  return m;
}

describe("JSON text of a receive", () => {
  it("writes each string as JSON.stringify does", () => {
    const random = seededRandom(29);
    for (let i = 0; i < 5_000; i++) {
      const text = randomText(random);
      expect(jsonString(text)).toBe(JSON.stringify(text));
    }
    for (const piece of pieces) expect(jsonString(piece)).toBe(JSON.stringify(piece));
  });

  it("writes the response JSON.stringify wrote, byte for byte", () => {
    const random = seededRandom(34);
    expect(receiveJsonText([])).toBe("{}");
    for (let i = 0; i < 500; i++) {
      const messages = Array.from({ length: Math.floor(random() * 11) }, (_, k) => randomMessage(random, k));
      const text = receiveJsonText(messages);
      expect(text).toBe(JSON.stringify(receiveJson(messages)));
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(receiveJson(messages))));
    }
  });
});

function randomFailed(random: () => number): BatchResultErrorEntry[] {
  return Array.from({ length: Math.floor(random() * 3) }, (_, k) => ({ Id: `f${k}${randomText(random)}`, SenderFault: random() < 0.5, Code: "InvalidParameterValue", Message: randomText(random) }));
}

/** A value or, as often, undefined: JSON.stringify leaves the member out. */
function maybe(random: () => number, text: string): string | undefined {
  return random() < 0.5 ? text : undefined;
}

describe("JSON text of the send and delete answers", () => {
  it("writes what JSON.stringify wrote, byte for byte", () => {
    const random = seededRandom(35);
    for (let i = 0; i < 500; i++) {
      const send: SendMessageBatchResult = {
        Successful: Array.from({ length: Math.floor(random() * 11) }, (_, k) => ({
          Id: `${k}${randomText(random)}`,
          MD5OfMessageBody: "0123456789abcdef0123456789abcdef",
          MD5OfMessageAttributes: maybe(random, "fedcba9876543210fedcba9876543210"),
          MD5OfMessageSystemAttributes: maybe(random, "00112233445566778899aabbccddeeff"),
          MessageId: `0193a6f0-${randomText(random)}`,
          SequenceNumber: maybe(random, "18849496460467696128"),
        })),
        Failed: randomFailed(random),
      };
      expect(sendBatchJsonText(send)).toBe(JSON.stringify(send));
      for (const entry of send.Successful) {
        const { Id: _id, ...single } = entry;
        expect(sendJsonText(single)).toBe(JSON.stringify(single));
      }
      const deleted: DeleteMessageBatchResult = { Successful: Array.from({ length: Math.floor(random() * 11) }, (_, k) => ({ Id: `${k}${randomText(random)}` })), Failed: randomFailed(random) };
      expect(deleteBatchJsonText(deleted)).toBe(JSON.stringify(deleted));
    }
  });
});
