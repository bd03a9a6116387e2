/**
 * Receipt handles: each is signed on its own, so none can be made or edited without the secret,
 * and only the exact spelling the server wrote is accepted.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SluiceError } from "../../src/core/errors.js";
import { ReceiptCodec, loadReceiptSecret, newReceiptSecret } from "../../src/core/receipt.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const codec = new ReceiptCodec(newReceiptSecret());

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

/** The handle with its MAC recomputed by nobody: only the text before the MAC changed. */
function withText(handle: string, edit: (text: string) => string): string {
  const cut = handle.lastIndexOf(":");
  return `${edit(handle.slice(0, cut))}${handle.slice(cut)}`;
}

describe("receipt handles", () => {
  it("round-trip, as plain text with nothing to escape", () => {
    const r = { queueId: 7, seq: 123_456_789, token: "AbCd-_0123456789xyzQ" };
    const handle = codec.encode(r);
    expect(handle).toMatch(/^sl3:7:123456789:AbCd-_0123456789xyzQ:[A-Za-z0-9_-]{22}$/);
    expect(codec.decode(handle)).toEqual(r);
  });

  it("the handles of one receive share its token, yet none turns into another by editing it", () => {
    const token = "one-receive-token";
    const first = codec.encode({ queueId: 3, seq: 41, token });
    const second = codec.encode({ queueId: 3, seq: 42, token });
    expect(codec.decode(second).seq).toBe(42);
    // Editing the seq (or the queue) of a valid handle names another message with its MAC: refused.
    expectInvalid(withText(first, (t) => t.replace(":41:", ":42:")));
    expectInvalid(withText(first, (t) => t.replace("sl3:3:", "sl3:4:")));
    expectInvalid(withText(first, (t) => t.replace(token, "another-token-xx")));
    // Nor does a MAC carried over from another handle help.
    expectInvalid(`${second.slice(0, second.lastIndexOf(":"))}${first.slice(first.lastIndexOf(":"))}`);
  });

  it("another secret's handles are refused", () => {
    const handle = new ReceiptCodec(newReceiptSecret()).encode({ queueId: 1, seq: 2, token: "tokentoken12" });
    expectInvalid(handle);
  });

  it("refuses spellings other than the one the server wrote", () => {
    const handle = codec.encode({ queueId: 12, seq: 345, token: "tokentoken12" });
    const mac = handle.slice(handle.lastIndexOf(":") + 1);
    // The last base64url character of 16 bytes carries 4 spare bits: flipping them decodes the same bytes.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(mac.at(-1)!);
    const sameBytes = `${handle.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(Buffer.from(sameBytes.slice(-22), "base64url")).toEqual(Buffer.from(mac, "base64url"));
    for (const variant of [
      withText(handle, (t) => t.replace("sl3:12:", "sl3:012:")),
      withText(handle, (t) => t.replace(":345:", ":+345:")),
      withText(handle, (t) => t.replace("sl3:", "SL3:")),
      sameBytes,
      `${handle}=`,
      `${handle} `,
      ` ${handle}`,
      handle.toUpperCase(),
      `${handle.slice(0, -22)}${Buffer.from(mac, "base64url").toString("base64")}`,
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
      const handle = new ReceiptCodec(first).encode({ queueId: 1, seq: 1, token: "tokentoken12" });
      expect(new ReceiptCodec(again).decode(handle).seq).toBe(1);
      store.db.prepare("UPDATE server_secrets SET value = 'short'").run();
      await expect(loadReceiptSecret(store)).rejects.toThrow(/not 32 or more bytes/);
    } finally {
      await store.close();
      await removeTempDirs();
    }
  });
});
