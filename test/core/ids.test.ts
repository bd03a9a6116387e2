import { describe, expect, it } from "vitest";
import { cryptoIdSource } from "../../src/server/ids.js";

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("the production id source", () => {
  it("makes RFC 9562 v7 UUIDs whose first 48 bits are the millisecond timestamp", () => {
    const ids = cryptoIdSource({ nowMs: () => 0x0191_2345_6789 });
    const id = ids.messageId();
    expect(id).toMatch(uuidV7);
    expect(id.slice(0, 13)).toBe("01912345-6789");
  });

  it("orders ids by time, so index inserts stay at the tail", () => {
    let nowMs = 1_700_000_000_000;
    const ids = cryptoIdSource({ nowMs: () => nowMs });
    const made: string[] = [];
    for (let i = 0; i < 500; i++) {
      made.push(ids.messageId());
      nowMs += 1;
    }
    expect([...made].sort()).toEqual(made);
  });

  it("keeps ids of the same millisecond distinct and unguessable (74 random bits)", () => {
    const ids = cryptoIdSource({ nowMs: () => 1_700_000_000_000 });
    const made = new Set(Array.from({ length: 10_000 }, () => ids.messageId()));
    expect(made.size).toBe(10_000);
    // The random part varies in every position (not a counter).
    const tails = [...made].map((id) => id.slice(24));
    expect(new Set(tails.map((t) => t[0])).size).toBeGreaterThan(8);
  });

  it("draws receipt tokens of 16 base64url characters, all distinct, across pool refills", () => {
    const ids = cryptoIdSource();
    const tokens = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const token = ids.receiptToken();
      expect(token).toMatch(/^[A-Za-z0-9_-]{16}$/);
      tokens.add(token);
      ids.messageId(); // interleaved draws share the pool
    }
    expect(tokens.size).toBe(2_000);
  });
});
