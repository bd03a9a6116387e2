/** The JSON form stores keep message attributes in (binary values as base64). */
import type { MessageAttributes } from "./message.js";

interface StoredAttribute {
  t: string;
  s?: string;
  b?: string;
}

export function attributesToJson(attributes: MessageAttributes): string | null {
  const names = Object.keys(attributes);
  if (names.length === 0) return null;
  const out: Record<string, StoredAttribute> = {};
  for (const name of names) {
    const v = attributes[name]!;
    out[name] = v.binaryValue ? { t: v.dataType, b: Buffer.from(v.binaryValue).toString("base64") } : { t: v.dataType, s: v.stringValue ?? "" };
  }
  return JSON.stringify(out);
}

/** The attributes as attributesFromJson(attributesToJson(attributes)) gives them, without the JSON: a binary value a Buffer, a missing string "". */
export function attributesAsStored(attributes: MessageAttributes): MessageAttributes {
  const out: MessageAttributes = {};
  for (const name of Object.keys(attributes)) {
    const v = attributes[name]!;
    out[name] = v.binaryValue ? { dataType: v.dataType, binaryValue: Buffer.from(v.binaryValue) } : { dataType: v.dataType, stringValue: v.stringValue ?? "" };
  }
  return out;
}

export function attributesFromJson(json: string | null): MessageAttributes {
  if (!json) return {};
  const parsed = JSON.parse(json) as Record<string, StoredAttribute>;
  const out: MessageAttributes = {};
  for (const [name, v] of Object.entries(parsed)) {
    out[name] = v.b !== undefined ? { dataType: v.t, binaryValue: Buffer.from(v.b, "base64") } : { dataType: v.t, stringValue: v.s ?? "" };
  }
  return out;
}
