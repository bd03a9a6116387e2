/**
 * The MD5 digests SQS returns and SDKs verify: of the body, and of message (or system) attributes
 * in SQS's binary encoding — names sorted, each as length-prefixed name, type, a transport byte
 * (1 = string, 2 = binary) and length-prefixed value. Computed once at send.
 */
import { hash } from "node:crypto";
import type { MessageAttributes } from "./message.js";

export function md5Hex(text: string | Uint8Array): string {
  // One-shot: no Hash object per message (about a quarter cheaper for a 1 KiB body).
  return hash("md5", text, "hex");
}

function lengthPrefixed(bytes: Buffer): Buffer[] {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length, 0);
  return [len, bytes];
}

/** Undefined when there are no attributes (SQS then omits the digest). */
export function attributesMd5(attributes: MessageAttributes): string | undefined {
  const names = Object.keys(attributes).sort();
  if (names.length === 0) return undefined;
  const parts: Buffer[] = [];
  for (const name of names) {
    const value = attributes[name]!;
    parts.push(...lengthPrefixed(Buffer.from(name, "utf8")));
    parts.push(...lengthPrefixed(Buffer.from(value.dataType, "utf8")));
    if (value.binaryValue) {
      parts.push(Buffer.from([2]), ...lengthPrefixed(Buffer.from(value.binaryValue)));
    } else {
      parts.push(Buffer.from([1]), ...lengthPrefixed(Buffer.from(value.stringValue ?? "", "utf8")));
    }
  }
  return md5Hex(Buffer.concat(parts));
}
