/** Receipt handles: what a receive hands out decodes back; old `sl1` handles still decode; junk doesn't. */
import { describe, expect, it } from "vitest";
import { SluiceError } from "../../src/core/errors.js";
import { decodeReceipt, encodeReceipt } from "../../src/core/receipt.js";

const invalid = (handle: string): void => {
  expect(() => decodeReceipt(handle)).toThrow(SluiceError);
  try {
    decodeReceipt(handle);
  } catch (err) {
    expect((err as SluiceError).code).toBe("ReceiptHandleInvalid");
  }
};

describe("receipt handles", () => {
  it("round-trip, as plain text with nothing to escape", () => {
    const r = { queueId: 7, seq: 123_456_789, token: "AbCd-_0123456789xyzQ" };
    const handle = encodeReceipt(r);
    expect(handle).toMatch(/^[A-Za-z0-9:_-]+$/);
    expect(decodeReceipt(handle)).toEqual(r);
  });

  it("still reads the base64url `sl1` handles of earlier versions", () => {
    const legacy = Buffer.from("sl1:3:42:tokentoken12", "utf8").toString("base64url");
    expect(decodeReceipt(legacy)).toEqual({ queueId: 3, seq: 42, token: "tokentoken12" });
  });

  it("refuses anything else", () => {
    for (const handle of [
      "",
      "sl2:1:2",
      "sl2:1:2:short",
      "sl2:x:2:tokentoken12",
      "sl2:1:2:tokentoken12 ",
      "sl1:1:2:tokentoken12", // an sl1 handle must be base64url, not plain
      Buffer.from("sl2:1:2:tokentoken12", "utf8").toString("base64url"), // nor sl2 in base64
      Buffer.from("sl1:1:2:bad token!", "utf8").toString("base64url"),
      "x".repeat(300),
    ]) {
      invalid(handle);
    }
  });
});
