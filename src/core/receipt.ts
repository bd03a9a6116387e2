/**
 * Receipt handles: opaque to clients, they name the queue, the message and the receive that
 * produced them, and carry a MAC over all three under the server's receipt secret. No handle can
 * be made or edited without the secret — each stands on its own, even among the messages of one
 * receive, which share the receive's token.
 *
 * Written as plain text, `sl3:<queue id>:<seq>:<token>:<mac>` (nothing to escape in JSON or XML):
 * the MAC is HMAC-SHA256 over the text before its last `:`, truncated to 128 bits, in base64url.
 * A handle is valid only as the server spelled it: the MAC covers the text as sent, so a leading
 * zero or another spelling of the same numbers fails it, and the MAC must be the exact 22
 * characters the server wrote (base64url's spare bits included). Unsigned handles of earlier
 * versions (`sl1`, `sl2`) are refused; their messages come back when their visibility ends.
 */
import { type KeyObject, createHmac, createSecretKey, randomBytes, timingSafeEqual } from "node:crypto";
import { assert, fail } from "./errors.js";
import type { ReceiptRef, Store } from "./store.js";

export interface Receipt extends ReceiptRef {
  queueId: number;
}

/** HMAC-SHA256 gains nothing from a longer key. */
export const receiptSecretBytes = 32;
const macBytes = 16;
/** base64url of macBytes, unpadded. */
const macChars = 22;
/** Longer than any handle the server writes: two 15-digit numbers, a 64-character token, the MAC. */
const handleMaxChars = 128;
const signedText = /^sl3:(0|[1-9]\d{0,14}):(0|[1-9]\d{0,14}):([A-Za-z0-9_-]{8,64})$/;

export class ReceiptCodec {
  private readonly key: KeyObject;

  constructor(secret: Uint8Array) {
    assert(secret.length >= receiptSecretBytes, `a receipt secret has at least ${receiptSecretBytes} bytes`);
    this.key = createSecretKey(secret);
  }

  encode(r: Receipt): string {
    const text = `sl3:${r.queueId}:${r.seq}:${r.token}`;
    return `${text}:${this.mac(text)}`;
  }

  /** The receipt a handle names; ReceiptHandleInvalid unless this server wrote it, exactly so. */
  decode(handle: string): Receipt {
    const cut = handle.lastIndexOf(":");
    if (handle.length <= handleMaxChars && cut !== -1 && handle.length - cut - 1 === macChars) {
      const text = handle.slice(0, cut);
      const m = signedText.exec(text);
      // latin1: one byte per character, so both sides have macChars bytes whatever was sent.
      if (m && timingSafeEqual(Buffer.from(handle.slice(cut + 1), "latin1"), Buffer.from(this.mac(text), "latin1"))) {
        return { queueId: Number(m[1]), seq: Number(m[2]), token: m[3]! };
      }
    }
    return invalidReceipt(handle);
  }

  private mac(text: string): string {
    return createHmac("sha256", this.key).update(text).digest().toString("base64url", 0, macBytes);
  }
}

/** SQS's words; a handle longer than any valid one is quoted only in part. */
export function invalidReceipt(handle: string): never {
  const quoted = handle.length > handleMaxChars ? `${handle.slice(0, handleMaxChars)}…` : handle;
  return fail("ReceiptHandleInvalid", `The input receipt handle "${quoted}" is not a valid receipt handle.`);
}

/** A new random receipt secret. */
export function newReceiptSecret(): Buffer {
  return randomBytes(receiptSecretBytes);
}

const receiptSecretName = "receipt-handles";

/**
 * The receipt secret kept in the store: made by the first start, read by every later one (and by
 * every node sharing the store), so handles stay valid across restarts and nodes.
 */
export async function loadReceiptSecret(store: Pick<Store, "secretGetOrCreate">): Promise<Buffer> {
  const stored = await store.secretGetOrCreate({ name: receiptSecretName, candidate: newReceiptSecret().toString("base64url") });
  const secret = Buffer.from(stored, "base64url");
  if (secret.length < receiptSecretBytes || secret.toString("base64url") !== stored) {
    throw new Error(`The store's ${receiptSecretName} secret is not ${receiptSecretBytes} or more bytes of base64url; the data may be damaged.`);
  }
  return secret;
}
