/**
 * Message attributes on the wire ↔ core: decoding on send (binary values are base64 in both
 * protocols), the `Sluice.Priority` extension, the ReceiveMessage name filter, and the encoders
 * for both response formats.
 */
import { attributesMd5, fail, limits, type MessageAttributes, type MessageAttributeValue } from "../../core/index.js";
import { type WireObject, asObject, optionalString } from "./wire-input.js";
import { escapeXml } from "./xml.js";

export interface WireAttributeValue {
  DataType: string;
  StringValue?: string;
  BinaryValue?: string;
}

export function decodeMessageAttributes(map: WireObject | undefined, label: string): MessageAttributes | undefined {
  if (!map) return undefined;
  const out: MessageAttributes = {};
  for (const name in map) {
    const value = asObject(map[name] ?? null, `${label}.${name}`);
    // A missing DataType becomes "" so core reports it with SQS's wording.
    const attribute: MessageAttributeValue = { dataType: optionalString(value, "DataType") ?? "" };
    const stringValue = optionalString(value, "StringValue");
    if (stringValue !== undefined) attribute.stringValue = stringValue;
    const binaryValue = optionalString(value, "BinaryValue");
    if (binaryValue !== undefined) attribute.binaryValue = Buffer.from(binaryValue, "base64");
    out[name] = attribute;
  }
  return out;
}

/** Senders may set only AWSTraceHeader, a String (the model's MessageSystemAttributeNameForSends). */
export function checkSystemAttributes(attributes: MessageAttributes | undefined): void {
  if (!attributes) return;
  for (const [name, value] of Object.entries(attributes)) {
    if (name !== "AWSTraceHeader") fail("InvalidParameterValue", `Message system attribute name '${name}' is invalid.`);
    if (value.dataType !== "String" || !value.stringValue) {
      fail("InvalidParameterValue", "The message system attribute 'AWSTraceHeader' must have a non-empty value of type String.");
    }
  }
}

export const priorityAttributeName = "Sluice.Priority";

/**
 * The priority a `Sluice.Priority` attribute asks for. The attribute stays a normal attribute too,
 * so the MD5 a client computed over what it sent still matches.
 */
export function priorityFromAttributes(attributes: MessageAttributes | undefined): number | undefined {
  const attribute = attributes?.[priorityAttributeName];
  if (!attribute) return undefined;
  const text = attribute.stringValue ?? "";
  const isNumber = attribute.dataType === "Number" || attribute.dataType.startsWith("Number.");
  if (!isNumber || !/^\d+$/.test(text) || Number(text) < limits.priorityMin || Number(text) > limits.priorityMax) {
    fail(
      "InvalidParameterValue",
      `Value ${text.slice(0, 40)} for message attribute ${priorityAttributeName} is invalid. Reason: must be a Number from ${limits.priorityMin} to ${limits.priorityMax}.`,
    );
  }
  return Number(text);
}

/**
 * A ReceiveMessage MessageAttributeNames filter: `All`, `*` or `.*` (every attribute — SQS takes
 * all three), `prefix.*`, or exact names.
 */
export interface AttributeNameFilter {
  all: boolean;
  names: Set<string>;
  prefixes: string[];
}

export function attributeNameFilter(requested: string[] | undefined): AttributeNameFilter {
  const filter: AttributeNameFilter = { all: false, names: new Set(), prefixes: [] };
  for (const name of requested ?? []) {
    if (name === "All" || name === "*" || name === ".*") filter.all = true;
    else if (name.endsWith(".*")) filter.prefixes.push(name.slice(0, -1));
    else filter.names.add(name);
  }
  return filter;
}

/**
 * The attributes a receive returns and their digest. When every attribute is returned, the digest
 * computed at send is reused; a subset gets its own, since SDKs verify it against what they got.
 */
export function selectAttributes(
  attributes: MessageAttributes,
  storedMd5: string | undefined,
  filter: AttributeNameFilter,
): { attributes: MessageAttributes; md5: string | undefined } | undefined {
  if (storedMd5 === undefined) return undefined;
  if (filter.all) return { attributes, md5: storedMd5 };
  if (filter.names.size === 0 && filter.prefixes.length === 0) return undefined;
  const selected: MessageAttributes = {};
  let count = 0;
  let total = 0;
  for (const name in attributes) {
    total++;
    if (filter.names.has(name) || filter.prefixes.some((p) => name.startsWith(p))) {
      selected[name] = attributes[name]!;
      count++;
    }
  }
  if (count === 0) return undefined;
  return { attributes: selected, md5: count === total ? storedMd5 : attributesMd5(selected) };
}

export function encodeAttributesJson(attributes: MessageAttributes): Record<string, WireAttributeValue> {
  const out: Record<string, WireAttributeValue> = {};
  for (const name in attributes) {
    const v = attributes[name]!;
    out[name] = v.binaryValue ? { BinaryValue: Buffer.from(v.binaryValue).toString("base64"), DataType: v.dataType } : { StringValue: v.stringValue ?? "", DataType: v.dataType };
  }
  return out;
}

export function encodeAttributesXml(attributes: MessageAttributes): string {
  let out = "";
  for (const name in attributes) {
    const v = attributes[name]!;
    const value = v.binaryValue
      ? `<BinaryValue>${Buffer.from(v.binaryValue).toString("base64")}</BinaryValue>`
      : `<StringValue>${escapeXml(v.stringValue ?? "")}</StringValue>`;
    out += `<MessageAttribute><Name>${escapeXml(name)}</Name><Value>${value}<DataType>${escapeXml(v.dataType)}</DataType></Value></MessageAttribute>`;
  }
  return out;
}
