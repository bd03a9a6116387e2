/**
 * Receipt handles: each is signed on its own, so none can be made or edited without the secret,
 * and only the exact spelling the server wrote is accepted — for the handles written now (sl4,
 * one HMAC per receive) and for those written before them (sl3, one HMAC per handle).
 */
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SluiceError } from "../../src/core/errors.js";
import { ReceiptCodec, loadReceiptSecret, newReceiptSecret } from "../../src/core/receipt.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const secret = newReceiptSecret();
const codec = new ReceiptCodec(secret);

function expectInvalid(handle: string, by: ReceiptCodec = codec): void {
  let caught: unknown;
  try {
    by.decode(handle);
  } catch (err) {
    caught = err;
  }
  expect(caught, handle).toBeInstanceOf(SluiceError);
  expect((caught as SluiceError).code).toBe("ReceiptHandleInvalid");
}

/** An sl3 handle as servers before sl4 wrote it: HMAC-SHA256 of the text, 16 bytes in base64url. */
function sl3Handle(secret: Buffer, r: { queueId: number; seq: number; token: string }): string {
  const text = `sl3:${r.queueId}:${r.seq}:${r.token}`;
  return `${text}:${createHmac("sha256", secret).update(text).digest().toString("base64url", 0, 16)}`;
}

/** The sl4 handle of `r`, made in a receive of two (a receive of one gets sl3). */
function sl4Of(r: { queueId: number; seq: number; token: string }, by: ReceiptCodec = codec): string {
  return by.encodeAll(r.queueId, [r, { seq: r.seq + 1, token: r.token }])[0]!;
}

/** The handle with its MAC recomputed by nobody: only the text before the MAC changed. */
function withText(handle: string, edit: (text: string) => string): string {
  const cut = handle.lastIndexOf(":");
  return `${edit(handle.slice(0, cut))}${handle.slice(cut)}`;
}

describe("receipt handles", () => {
  it("round-trip, as plain text with nothing to escape", () => {
    const r = { queueId: 7, seq: 123_456_789, token: "AbCd-_0123456789xyzQ" };
    const handle = sl4Of(r);
    expect(handle).toMatch(/^sl4:7:123456789:AbCd-_0123456789xyzQ:[A-Za-z0-9_-]{16}$/);
    expect(codec.decode(handle)).toEqual(r);
    const big = { queueId: 999_999_999_999_999, seq: 999_999_999_999_998, token: "t".repeat(64) };
    expect(codec.decode(sl4Of(big))).toEqual(big);
    expect(codec.decode(sl4Of({ queueId: 0, seq: 0, token: "tokentok" }))).toEqual({ queueId: 0, seq: 0, token: "tokentok" });
  });

  it("a receive of one gets the sl3 handle, the same as the earlier servers wrote", () => {
    const r = { queueId: 7, seq: 42, token: "AbCd-_0123456789xyzQ" };
    expect(codec.encode(r)).toBe(sl3Handle(secret, r));
    expect(codec.encodeAll(7, [{ seq: 42, token: r.token }])).toEqual([sl3Handle(secret, r)]);
    expect(codec.decode(codec.encode(r))).toEqual(r);
  });

  it("a receive's handles decode each to its own message, alone or together, in any order", () => {
    const token = "one-receive-token";
    const seqs = [5, 6, 2 ** 32, 2 ** 32 + 5, 2 ** 40 + 1, 999_999_999_999_999];
    const handles = codec.encodeAll(9, seqs.map((seq) => ({ seq, token })));
    expect(new Set(handles.map((h) => h.slice(h.lastIndexOf(":")))).size).toBe(seqs.length);
    handles.forEach((h, i) => expect(codec.decode(h)).toEqual({ queueId: 9, seq: seqs[i], token }));
    const other = sl4Of({ queueId: 9, seq: 5, token: "another-receive" });
    const mixed = [handles[3]!, other, "junk", handles[0]!, sl3Handle(secret, { queueId: 9, seq: 8, token: "older-receive" })];
    expect(codec.decodeAll(mixed)).toEqual([
      { queueId: 9, seq: 2 ** 32 + 5, token },
      { queueId: 9, seq: 5, token: "another-receive" },
      undefined,
      { queueId: 9, seq: 5, token },
      { queueId: 9, seq: 8, token: "older-receive" },
    ]);
    // A FIFO retry hands back messages of earlier receives: each keeps its own token.
    const retried = codec.encodeAll(9, [{ seq: 1, token: "receive-one" }, { seq: 2, token: "receive-two" }]);
    expect(codec.decodeAll(retried)).toEqual([{ queueId: 9, seq: 1, token: "receive-one" }, { queueId: 9, seq: 2, token: "receive-two" }]);
  });

  it("the handles of one receive share its token, yet none turns into another by editing it", () => {
    const token = "one-receive-token";
    const [first, second] = codec.encodeAll(3, [{ seq: 41, token }, { seq: 42, token }]) as [string, string];
    expect(codec.decode(second).seq).toBe(42);
    // Editing the seq (or the queue, or the token) of a valid handle names another message with its tag: refused.
    expectInvalid(withText(first, (t) => t.replace(":41:", ":42:")));
    expectInvalid(withText(first, (t) => t.replace(":41:", ":40:")));
    expectInvalid(withText(first, (t) => t.replace("sl4:3:", "sl4:4:")));
    expectInvalid(withText(first, (t) => t.replace(token, "another-token-xx")));
    // Nor does a tag carried over from another handle of the receive, or of another receive with the same seq.
    expectInvalid(`${second.slice(0, second.lastIndexOf(":"))}${first.slice(first.lastIndexOf(":"))}`);
    const elsewhere = sl4Of({ queueId: 3, seq: 41, token: "other-receive-tok" });
    expectInvalid(`${first.slice(0, first.lastIndexOf(":"))}${elsewhere.slice(elsewhere.lastIndexOf(":"))}`);
    const otherQueue = sl4Of({ queueId: 4, seq: 41, token });
    expectInvalid(`${first.slice(0, first.lastIndexOf(":"))}${otherQueue.slice(otherQueue.lastIndexOf(":"))}`);
    // Nor an sl3 MAC, nor the same text relabelled as the other version.
    expectInvalid(`sl3${first.slice(3)}`);
    expectInvalid(sl3Handle(secret, { queueId: 3, seq: 41, token }).replace("sl3:", "sl4:"));
    // Every single-character change of the tag is refused.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (let i = first.length - 16; i < first.length; i++) {
      const swapped = alphabet[(alphabet.indexOf(first[i]!) + 1) % 64];
      expectInvalid(`${first.slice(0, i)}${swapped}${first.slice(i + 1)}`);
    }
    // Refused in a batch too, while the valid handles beside it decode.
    expect(codec.decodeAll([withText(first, (t) => t.replace(":41:", ":42:")), second])).toEqual([undefined, { queueId: 3, seq: 42, token }]);
  });

  it("another secret's handles are refused", () => {
    const other = new ReceiptCodec(newReceiptSecret());
    expectInvalid(sl4Of({ queueId: 1, seq: 2, token: "tokentoken12" }, other));
    expectInvalid(other.encode({ queueId: 1, seq: 2, token: "tokentoken12" }));
    expectInvalid(sl3Handle(newReceiptSecret(), { queueId: 1, seq: 2, token: "tokentoken12" }));
  });

  it("refuses spellings other than the one the server wrote", () => {
    const handle = sl4Of({ queueId: 12, seq: 345, token: "tokentoken12" });
    for (const variant of [
      withText(handle, (t) => t.replace("sl4:12:", "sl4:012:")),
      withText(handle, (t) => t.replace(":345:", ":0345:")),
      withText(handle, (t) => t.replace(":345:", ":+345:")),
      withText(handle, (t) => t.replace("sl4:", "SL4:")),
      `${handle}=`,
      `${handle}A`,
      handle.slice(0, -1),
      `${handle} `,
      ` ${handle}`,
      handle.toUpperCase(),
    ]) {
      expectInvalid(variant);
    }
  });

  it("still takes the sl3 handles written before sl4, exactly as written", () => {
    const old = sl3Handle(secret, { queueId: 12, seq: 345, token: "tokentoken12" });
    expect(codec.decode(old)).toEqual({ queueId: 12, seq: 345, token: "tokentoken12" });
    const mac = old.slice(old.lastIndexOf(":") + 1);
    // The last base64url character of 16 bytes carries 4 spare bits: flipping them decodes the same bytes.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(mac.at(-1)!);
    const sameBytes = `${old.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(Buffer.from(sameBytes.slice(-22), "base64url")).toEqual(Buffer.from(mac, "base64url"));
    for (const variant of [
      withText(old, (t) => t.replace(":345:", ":346:")),
      withText(old, (t) => t.replace("sl3:12:", "sl3:13:")),
      withText(old, (t) => t.replace("tokentoken12", "tokentoken13")),
      withText(old, (t) => t.replace("sl3:12:", "sl3:012:")),
      withText(old, (t) => t.replace(":345:", ":+345:")),
      withText(old, (t) => t.replace("sl3:", "SL3:")),
      sameBytes,
      `${old}=`,
      `${old} `,
      ` ${old}`,
      old.toUpperCase(),
      `${old.slice(0, -22)}${Buffer.from(mac, "base64url").toString("base64")}`,
    ]) {
      expectInvalid(variant);
    }
  });

  it("refuses the unsigned handles of earlier versions, junk, and over-long input", () => {
    for (const handle of [
      "",
      "sl2:1:2:tokentoken12",
      Buffer.from("sl1:3:42:tokentoken12", "utf8").toString("base64url"),
      "sl3:1:2:tokentoken12",
      "sl4:1:2:tokentoken12",
      "sl4:1:2:tokentoken12:",
      `sl4:1:2:tokentoken12:${"A".repeat(16)}`,
      `sl4:1:2:tokentoken12:${"é".repeat(16)}`,
      "sl3:1:2:tokentoken12:",
      `sl3:1:2:tokentoken12:${"A".repeat(22)}`,
      `sl3:1:2:tokentoken12:${"é".repeat(22)}`,
      "x".repeat(300),
    ]) {
      expectInvalid(handle);
    }
    try {
      codec.decode("y".repeat(100_000));
    } catch (err) {
      // The error quotes a long handle only in part.
      expect((err as Error).message.length).toBeLessThan(300);
    }
  });

  it("the store's secret is made once, kept across reopen, and refused when damaged", async () => {
    const dir = await makeTempDir("sluice-receipt-");
    const filename = join(dir, "sluice.db");
    let store = openSqliteStore({ filename });
    try {
      const first = await loadReceiptSecret(store);
      await store.close();
      store = openSqliteStore({ filename });
      const again = await loadReceiptSecret(store);
      expect(again.equals(first)).toBe(true);
      const handle = sl4Of({ queueId: 1, seq: 1, token: "tokentoken12" }, new ReceiptCodec(first));
      expect(new ReceiptCodec(again).decode(handle).seq).toBe(1);
      expect(new ReceiptCodec(again).decode(sl3Handle(first, { queueId: 1, seq: 2, token: "tokentoken12" })).seq).toBe(2);
      store.db.prepare("UPDATE server_secrets SET value = 'short'").run();
      await expect(loadReceiptSecret(store)).rejects.toThrow(/not 32 or more bytes/);
    } finally {
      await store.close();
      await removeTempDirs();
    }
  });
});
