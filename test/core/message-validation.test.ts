import { describe, expect, it } from "vitest";
import { hasInvalidCharacters, isSqsNumber } from "../../src/core/message-validation.js";

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

describe("SQS Number attributes", () => {
  it("accept up to 38 significant digits and magnitudes from 10^-128 to 10^126", () => {
    for (const text of ["0", "-0.000", "42", "+3.5", "1e126", "1.0E+126", "-1e126", "1e-128", "0.5e-127", "12345678901234567890123456789012345678", ".5", "7."]) {
      expect(isSqsNumber(text), text).toBe(true);
    }
  });

  it("refuse more digits, larger or smaller magnitudes, and what is not a number", () => {
    for (const text of ["1e400", "1.1e126", "2e126", "1e127", "10e126", "1e-129", "0.01e-127", "123456789012345678901234567890123456789", "1234567890123456789012345678901234567800000", "1e", "abc", "", "1.2.3", "Infinity", "NaN"]) {
      expect(isSqsNumber(text), text).toBe(false);
    }
  });
});
