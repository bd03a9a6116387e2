import { describe, expect, it } from "vitest";
import { hasInvalidCharacters } from "../../src/core/message-validation.js";

describe("SQS character set", () => {
  it("accepts tab, newline, CR, printable text, BMP symbols and surrogate pairs (emoji)", () => {
    for (const text of ["plain", "a\tb\nc\rd", "é — ✓ \uE000 \uFFFD", "😀 𝄞", "\u{10FFFF}"]) {
      expect(hasInvalidCharacters(text), JSON.stringify(text)).toBe(false);
    }
  });

  it("rejects control characters, U+FFFE/U+FFFF and lone surrogates", () => {
    for (const text of ["\u0000", "a\u0001b", "\u000B", "\u000C", "\u001F", "x\uFFFE", "\uFFFF", "\uD800", "a\uDC00b", "😀\uD83D"]) {
      expect(hasInvalidCharacters(text), JSON.stringify(text)).toBe(true);
    }
  });
});
