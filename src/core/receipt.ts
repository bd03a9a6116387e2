/**
 * Receipt handles: opaque to clients, they name the queue, the message and the receive that
 * produced them. A new token on every receive makes an older handle stale.
 */
import { fail } from "./errors.js";
import type { ReceiptRef } from "./store.js";

export interface Receipt extends ReceiptRef {
  queueId: number;
}

export function encodeReceipt(r: Receipt): string {
  return Buffer.from(`sl1:${r.queueId}:${r.seq}:${r.token}`, "utf8").toString("base64url");
}

const receiptPattern = /^sl1:(\d{1,15}):(\d{1,15}):([A-Za-z0-9_-]{8,64})$/;

export function decodeReceipt(handle: string): Receipt {
  const text = handle.length <= 200 ? Buffer.from(handle, "base64url").toString("utf8") : "";
  const m = receiptPattern.exec(text);
  if (!m) fail("ReceiptHandleInvalid", `The input receipt handle "${handle}" is not a valid receipt handle.`);
  return { queueId: Number(m[1]), seq: Number(m[2]), token: m[3]! };
}
