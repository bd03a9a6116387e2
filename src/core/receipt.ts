/**
 * Receipt handles: opaque to clients, they name the queue, the message and the receive that
 * produced them, and carry a MAC over all three under the server's receipt secret. No handle can
 * be made or edited without the secret — each stands on its own, even among the messages of one
 * receive, which share the receive's token.
 *
 * Written as plain text, `sl4:<queue id>:<seq>:<token>:<tag>` (nothing to escape in JSON or XML).
 * One HMAC-SHA256 per receive, over `sl4:<queue id>:<token>`, gives a secret 128-bit mask; each
 * message's tag is AES-128 (under a key derived from the secret) of that mask XOR its seq,
 * truncated to 96 bits, in base64url (16 characters, no spare bits). The mask never leaves the
 * server, so a tag says nothing about another seq's or another receive's; and a receive of ten
 * pays one HMAC and one AES call instead of ten HMACs.
 * A receive of one message, which would pay an HMAC and an AES call for one handle, still gets the
 * earlier `sl3:<queue id>:<seq>:<token>:<mac>` (HMAC-SHA256 of the text before the last `:`, 128
 * bits), and sl3 handles written before sl4 stay valid. Either way a handle is valid only as the
 * server spelled it: a leading zero or another spelling of the same numbers fails it. Unsigned
 * handles of earlier versions (`sl1`, `sl2`) are refused; their messages come back when their
 * visibility ends.
 */
import { type Cipher, type KeyObject, createCipheriv, createHmac, createSecretKey, randomBytes, timingSafeEqual } from "node:crypto";
import { assert, fail } from "./errors.js";
import type { ReceiptRef, Store } from "./store.js";

export interface Receipt extends ReceiptRef {
  queueId: number;
}

/** HMAC-SHA256 gains nothing from a longer key. */
export const receiptSecretBytes = 32;
/** Longer than any handle the server writes: two 15-digit numbers, a 64-character token, the MAC. */
const handleMaxChars = 128;
const block = 16;
/** sl4: 12 of the AES block's 16 bytes, base64url. */
const tagBytes = 12;
const tagChars = 16;
const sl4Handle = /^sl4:(0|[1-9]\d{0,14}):(0|[1-9]\d{0,14}):([A-Za-z0-9_-]{8,64}):([A-Za-z0-9_-]{16})$/;
/** sl3: 16 bytes of HMAC, base64url unpadded. */
const sl3MacBytes = 16;
const sl3MacChars = 22;
const sl3Text = /^sl3:(0|[1-9]\d{0,14}):(0|[1-9]\d{0,14}):([A-Za-z0-9_-]{8,64})$/;

export class ReceiptCodec {
  private readonly key: KeyObject;
  /** AES-128-ECB, kept for the process: ECB holds no state between whole blocks, and this one is only ever given whole blocks. */
  private readonly blocks: Cipher;

  constructor(secret: Uint8Array) {
    assert(secret.length >= receiptSecretBytes, `a receipt secret has at least ${receiptSecretBytes} bytes`);
    this.key = createSecretKey(secret);
    // A label no handle text starts with: the block key is independent of every mask and sl3 MAC.
    const blockKey = createHmac("sha256", this.key).update("sl4 block key").digest().subarray(0, block);
    this.blocks = createCipheriv("aes-128-ecb", blockKey, null);
    this.blocks.setAutoPadding(false);
  }

  /**
   * The handles of one receive's messages, in order. A receive of one gets an sl3 handle: one
   * HMAC either way, and no AES call.
   */
  encodeAll(queueId: number, messages: ReadonlyArray<ReceiptRef>): string[] {
    if (messages.length === 1) return [this.sl3Handle(queueId, messages[0]!)];
    const input = Buffer.allocUnsafe(messages.length * block);
    let token: string | undefined;
    let mask: Buffer | undefined;
    messages.forEach((m, i) => {
      // One receive shares one token; a FIFO retry's messages share their first receive's.
      if (m.token !== token) {
        token = m.token;
        mask = this.mask(queueId, token);
      }
      maskedSeq(input, i * block, mask!, m.seq);
    });
    const tags = this.encrypt(input);
    return messages.map((m, i) => `sl4:${queueId}:${m.seq}:${m.token}:${tags.toString("base64url", i * block, i * block + tagBytes)}`);
  }

  encode(r: Receipt): string {
    return this.encodeAll(r.queueId, [r])[0]!;
  }

  /**
   * The receipt each handle names, or undefined unless this server wrote it, exactly so. Handles
   * of one receive share one HMAC here too.
   */
  decodeAll(handles: ReadonlyArray<string>): Array<Receipt | undefined> {
    const out: Array<Receipt | undefined> = new Array<Receipt | undefined>(handles.length).fill(undefined);
    const sl4: Array<{ at: number; receipt: Receipt; tag: string }> = [];
    handles.forEach((handle, at) => {
      if (handle.length > handleMaxChars) return;
      if (handle.startsWith("sl3:")) {
        out[at] = this.decodeSl3(handle);
        return;
      }
      const m = sl4Handle.exec(handle);
      if (m) sl4.push({ at, receipt: { queueId: Number(m[1]), seq: Number(m[2]), token: m[3]! }, tag: m[4]! });
    });
    if (sl4.length === 0) return out;
    const input = Buffer.allocUnsafe(sl4.length * block);
    let shared: string | undefined;
    let mask: Buffer | undefined;
    sl4.forEach(({ receipt: r }, i) => {
      const text = `${r.queueId}:${r.token}`;
      if (text !== shared) {
        shared = text;
        mask = this.mask(r.queueId, r.token);
      }
      maskedSeq(input, i * block, mask!, r.seq);
    });
    const tags = this.encrypt(input);
    sl4.forEach(({ at, receipt, tag }, i) => {
      if (sameText(tag, tags.toString("base64url", i * block, i * block + tagBytes))) out[at] = receipt;
    });
    return out;
  }

  /** The receipt a handle names; ReceiptHandleInvalid unless this server wrote it, exactly so. */
  decode(handle: string): Receipt {
    return this.decodeAll([handle])[0] ?? invalidReceipt(handle);
  }

  /** The secret 128 bits one receive's tags are made with. */
  private mask(queueId: number, token: string): Buffer {
    return createHmac("sha256", this.key).update(`sl4:${queueId}:${token}`).digest();
  }

  private encrypt(input: Buffer): Buffer {
    const out = this.blocks.update(input);
    // A partial block would stay buffered and shift every later tag: never let that pass.
    assert(out.length === input.length, "receipt tags are whole AES blocks");
    return out;
  }

  private sl3Handle(queueId: number, r: ReceiptRef): string {
    const text = `sl3:${queueId}:${r.seq}:${r.token}`;
    return `${text}:${this.sl3Mac(text)}`;
  }

  private sl3Mac(text: string): string {
    return createHmac("sha256", this.key).update(text).digest().toString("base64url", 0, sl3MacBytes);
  }

  private decodeSl3(handle: string): Receipt | undefined {
    const cut = handle.lastIndexOf(":");
    if (handle.length - cut - 1 !== sl3MacChars) return undefined;
    const text = handle.slice(0, cut);
    const m = sl3Text.exec(text);
    if (!m) return undefined;
    const mac = this.sl3Mac(text);
    // latin1: one byte per character, so both sides have sl3MacChars bytes whatever was sent.
    if (!timingSafeEqual(Buffer.from(handle.slice(cut + 1), "latin1"), Buffer.from(mac, "latin1"))) return undefined;
    return { queueId: Number(m[1]), seq: Number(m[2]), token: m[3]! };
  }
}

/** The mask's first 16 bytes XOR the seq as a 128-bit big-endian number, at `offset`. */
function maskedSeq(out: Buffer, offset: number, mask: Buffer, seq: number): void {
  mask.copy(out, offset, 0, block);
  const high = Math.floor(seq / 0x1_0000_0000);
  const low = seq >>> 0;
  out.writeUInt32BE((out.readUInt32BE(offset + 8) ^ high) >>> 0, offset + 8);
  out.writeUInt32BE((out.readUInt32BE(offset + 12) ^ low) >>> 0, offset + 12);
}

/** Equal strings of tagChars, compared without stopping at the first difference. */
function sameText(a: string, b: string): boolean {
  if (a.length !== tagChars || b.length !== tagChars) return false;
  let diff = 0;
  for (let i = 0; i < tagChars; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
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
