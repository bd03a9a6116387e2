/**
 * An independent implementation of the digests SQS returns, used as a test oracle (deliberately
 * not importing src/core, so a shared bug can't hide). The SDKs only verify MD5OfBody; the
 * attribute digests are checked here.
 *
 * MD5OfMessageAttributes: for each attribute, sorted by name: len(name) name len(type) type,
 * then 1 + len(value) value for String/Number, or 2 + len(bytes) bytes for Binary; lengths are
 * 4-byte big-endian.
 */
import { createHash } from "node:crypto";

export interface AttributeValueLike {
  DataType?: string | undefined;
  StringValue?: string | undefined;
  BinaryValue?: Uint8Array | string | undefined;
}

export function md5Of(text: string): string {
  return createHash("md5").update(text, "utf8").digest("hex");
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}

function prefixed(bytes: Buffer): Buffer {
  return Buffer.concat([u32(bytes.length), bytes]);
}

export function md5OfAttributes(attributes: Record<string, AttributeValueLike>): string {
  const parts: Buffer[] = [];
  for (const name of Object.keys(attributes).sort()) {
    const v = attributes[name]!;
    const dataType = v.DataType ?? "";
    parts.push(prefixed(Buffer.from(name, "utf8")), prefixed(Buffer.from(dataType, "utf8")));
    if (dataType.startsWith("Binary")) {
      const raw = v.BinaryValue;
      const bytes = typeof raw === "string" ? Buffer.from(raw, "base64") : Buffer.from(raw ?? new Uint8Array());
      parts.push(Buffer.from([2]), prefixed(bytes));
    } else {
      parts.push(Buffer.from([1]), prefixed(Buffer.from(v.StringValue ?? "", "utf8")));
    }
  }
  return createHash("md5").update(Buffer.concat(parts)).digest("hex");
}
