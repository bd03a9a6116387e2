/**
 * Receipt handles: opaque to clients, they name the queue, the message and the receive that
 * produced them. A new token on every receive makes an older handle stale.
 *
 * Written as plain text, `sl2:<queue id>:<seq>:<token>` (nothing to escape in JSON or XML):
 * encoding it as base64, as `sl1` handles were, cost ≈ 1 µs per message received and again per
 * delete (≈ 2.5 % of the main thread's profile). `sl1` handles (base64url of
 * `sl1:<queue>:<seq>:<token>`) are still read, so messages received before an upgrade can be
 * deleted after it.
 */
import { fail } from "./errors.js";
import type { ReceiptRef } from "./store.js";

export interface Receipt extends ReceiptRef {
  queueId: number;
}

export function encodeReceipt(r: Receipt): string {
  return `sl2:${r.queueId}:${r.seq}:${r.token}`;
}

const fields = /^sl[12]:(\d{1,15}):(\d{1,15}):([A-Za-z0-9_-]{8,64})$/;

export function decodeReceipt(handle: string): Receipt {
  // Plain text is an sl2 handle; anything else may be a base64url sl1 one (legacyText is "" otherwise).
  const m = fields.exec(handle.startsWith("sl2:") ? handle : legacyText(handle));
  if (!m) fail("ReceiptHandleInvalid", `The input receipt handle "${handle}" is not a valid receipt handle.`);
  return { queueId: Number(m[1]), seq: Number(m[2]), token: m[3]! };
}

/** The text inside an `sl1` handle ("" if it can't be one). */
function legacyText(handle: string): string {
  if (handle.length > 200) return "";
  const text = Buffer.from(handle, "base64url").toString("utf8");
  return text.startsWith("sl1:") ? text : "";
}
