/**
 * JSON nesting depth, measured two ways: on the text (before a parse that recurses) and on the
 * parsed value (after one that doesn't). Both must agree on every valid text, and the SQS JSON
 * decoder must refuse exactly what it refused when it measured every body's text first.
 */
import { describe, expect, it } from "vitest";
import { jsonTooDeep, maxJsonDepth, valueTooDeep } from "../../src/protocols/http/json-depth.js";
import { decodeJsonInput } from "../../src/protocols/sqs/json-codec.js";
import { SqsProtocolError } from "../../src/protocols/sqs/sqs-errors.js";
import { seededRandom } from "../crash/jobs-crash-kit.js";

const arrays = (levels: number): string => `${"[".repeat(levels)}${"]".repeat(levels)}`;
const objects = (levels: number): string => `${'{"k":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;

/** A random JSON text whose deepest branch is about `target` levels, with brackets and quotes inside strings. */
function randomText(random: () => number, target: number): string {
  const leaf = (): string => {
    const pick = Math.floor(random() * 4);
    if (pick === 0) return JSON.stringify(`x[{"\\]}${Math.floor(random() * 100)}`);
    if (pick === 1) return String(Math.floor(random() * 1000));
    return pick === 2 ? "null" : '"plain"';
  };
  // One spine goes deep and may stop early; its siblings are leaves or shallow branches.
  const value = (depth: number, limit: number): string => {
    if (depth >= limit || (depth > 0 && random() < 0.01)) return leaf();
    const n = 1 + Math.floor(random() * 3);
    const items = Array.from({ length: n }, (_, i) => (i === 0 ? value(depth + 1, limit) : random() < 0.5 ? leaf() : value(depth + 1, Math.min(limit, depth + 3))));
    const spineFirst = random() < 0.5;
    if (!spineFirst) items.reverse();
    return random() < 0.5 ? `[${items.join(",")}]` : `{${items.map((v, i) => `"k${i}":${v}`).join(",")}}`;
  };
  return value(0, target);
}

function sqsErrorOf(body: string): { name: string; message: string } {
  try {
    decodeJsonInput(body);
  } catch (err) {
    expect(err).toBeInstanceOf(SqsProtocolError);
    return { name: (err as SqsProtocolError).errorName, message: (err as SqsProtocolError).message };
  }
  return expect.unreachable();
}

const tooDeepMessage = `The request body nests JSON deeper than ${maxJsonDepth} levels.`;

describe("JSON depth on the text and on the parsed value", () => {
  it("allows the limit and refuses one level more, arrays and objects alike", () => {
    for (const make of [arrays, objects]) {
      expect(jsonTooDeep(make(maxJsonDepth))).toBe(false);
      expect(valueTooDeep(JSON.parse(make(maxJsonDepth)))).toBe(false);
      expect(jsonTooDeep(make(maxJsonDepth + 1))).toBe(true);
      expect(valueTooDeep(JSON.parse(make(maxJsonDepth + 1)))).toBe(true);
    }
    expect(valueTooDeep("[[[[[[")).toBe(false);
    expect(valueTooDeep(null)).toBe(false);
    expect(valueTooDeep([[1], { a: [[]] }], 4)).toBe(false);
    expect(valueTooDeep([[1], { a: [[]] }], 3)).toBe(true);
  });

  it("answers alike on 2,000 random texts around the limit, brackets inside strings included", () => {
    const random = seededRandom(20261126);
    let deep = 0;
    for (let i = 0; i < 2_000; i++) {
      const text = randomText(random, maxJsonDepth - 3 + Math.floor(random() * 6));
      const max = 1 + Math.floor(random() * (maxJsonDepth + 2));
      const expected = jsonTooDeep(text, max);
      if (expected) deep++;
      expect(valueTooDeep(JSON.parse(text), max), text).toBe(expected);
    }
    // Both answers occur often: the comparison is not of one answer only.
    expect(deep).toBeGreaterThan(200);
    expect(deep).toBeLessThan(1_800);
  });

  it("walks a value nested a million levels without recursing", () => {
    expect(valueTooDeep(JSON.parse(arrays(1_000_000)))).toBe(true);
  });
});

describe("the SQS JSON decoder's depth refusals", () => {
  it("decodes a body at the limit and refuses one a level deeper", () => {
    expect(decodeJsonInput(`{"QueueName":${arrays(maxJsonDepth - 1)}}`)).toEqual({ QueueName: JSON.parse(arrays(maxJsonDepth - 1)) });
    expect(sqsErrorOf(`{"QueueName":${arrays(maxJsonDepth)}}`)).toEqual({ name: "SerializationException", message: tooDeepMessage });
  });

  it("names depth first when a body is also invalid or holds __proto__, as when every text was measured first", () => {
    expect(sqsErrorOf(`{"QueueName":${arrays(5_000)}`)).toEqual({ name: "SerializationException", message: tooDeepMessage });
    expect(sqsErrorOf(`{"__proto__":${arrays(5_000)}}`)).toEqual({ name: "SerializationException", message: tooDeepMessage });
    expect(sqsErrorOf(`{"QueueName":${arrays(3)}`)).toEqual({ name: "SerializationException", message: "The request body is not valid JSON." });
  });
});
