/** The attribute digest against the independent oracle in test/support/md5.ts, over awkward inputs. */
import { describe, expect, it } from "vitest";
import { attributesMd5 } from "../../src/core/digests.js";
import type { MessageAttributes } from "../../src/core/message.js";
import { type AttributeValueLike, md5OfAttributes } from "../support/md5.js";

function asWire(attributes: MessageAttributes): Record<string, AttributeValueLike> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, v]) => [name, { DataType: v.dataType, StringValue: v.stringValue, BinaryValue: v.binaryValue }]),
  );
}

describe("attributesMd5", () => {
  it("is undefined without attributes", () => {
    expect(attributesMd5({})).toBeUndefined();
  });

  it("matches the oracle: sorting, non-ASCII text at any position, binary, custom types", () => {
    const cases: MessageAttributes[] = [
      { a: { dataType: "String", stringValue: "x" } },
      { Zeta: { dataType: "String", stringValue: "upper" }, alpha: { dataType: "Number", stringValue: "-1.5e3" }, _mid: { dataType: "String.custom", stringValue: "v" } },
      { "naïve.name": { dataType: "String", stringValue: "é at the start? no: café" }, e: { dataType: "String", stringValue: "éclair" } },
      { emoji: { dataType: "String", stringValue: "rocket 🚀 and 𝄞 clef" }, cjk: { dataType: "String.中文", stringValue: "漢字かな" } },
      { bin: { dataType: "Binary", binaryValue: new Uint8Array([0, 1, 2, 255]) }, empty: { dataType: "Binary.raw", binaryValue: new Uint8Array() } },
      { long: { dataType: "String", stringValue: "L".repeat(5_000) + "ü" + "M".repeat(3_000) } },
      Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`attr${9 - i}`, { dataType: i % 2 ? "Number" : "String", stringValue: String(i * 7) }])),
    ];
    for (const attributes of cases) expect(attributesMd5(attributes), JSON.stringify(Object.keys(attributes))).toBe(md5OfAttributes(asWire(attributes)));
  });
});
