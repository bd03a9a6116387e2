/**
 * A send's body skips core's character scan when the request's bytes show every string in it is
 * plain (ASCII, no backslash). Checked on random JSON texts made of what could break that
 * reasoning: raw control characters, escapes, DEL, non-ASCII, quotes.
 */
import { describe, expect, it } from "vitest";
import { hasInvalidCharacters } from "../../src/core/message-validation.js";
import { plainJsonStrings } from "../../src/protocols/sqs/json-codec.js";
import { seededRandom } from "../crash/jobs-crash-kit.js";

const pieces = ["x", "plain ", "~", "\u007f", "\t", "\n", "\u0001", "\u001f", "\\u0000", "\\u001F", "\\ud800", "\\uFFFE", "\\n", '\\"', "\\\\", "é", "\ud83d\ude00", "\uFFFE", '"'];

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (typeof value === "object" && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      strings(v, out);
    }
  }
  return out;
}

describe("plain JSON strings, known from the request's bytes", () => {
  it("holds only for texts whose every string needs no character check", () => {
    const random = seededRandom(2911);
    let plain = 0;
    let parsed = 0;
    for (let i = 0; i < 20_000; i++) {
      let body = "";
      const n = Math.floor(random() * 6);
      // Mostly texts without escapes or controls, so that many are plain.
      const pool = random() < 0.5 ? pieces.slice(0, 3) : pieces;
      for (let k = 0; k < n; k++) body += pool[Math.floor(random() * pool.length)]!;
      const text = `{"QueueUrl":"q","Entries":[{"Id":"a","MessageBody":"${body}"}],\n\t"${body}":1}`;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        continue;
      }
      parsed++;
      if (!plainJsonStrings(Buffer.from(text))) continue;
      plain++;
      for (const s of strings(value)) {
        expect(s).toMatch(/^[\x20-\x7f]*$/);
        expect(hasInvalidCharacters(s)).toBe(false);
      }
    }
    // Both kinds were seen: the check above was not vacuous.
    expect(plain).toBeGreaterThan(1_000);
    expect(parsed - plain).toBeGreaterThan(1_000);
  });

  it("is false for escapes, non-ASCII bytes and invalid UTF-8", () => {
    expect(plainJsonStrings(Buffer.from('{"MessageBody":"a\\u0000"}'))).toBe(false);
    expect(plainJsonStrings(Buffer.from('{"MessageBody":"é"}'))).toBe(false);
    expect(plainJsonStrings(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]))).toBe(false);
    expect(plainJsonStrings(Buffer.from('{"MessageBody":"plain ~ text\u007f"}'))).toBe(true);
  });
});
