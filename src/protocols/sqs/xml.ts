/**
 * XML for the query protocol, built with template strings (an order of magnitude faster than a
 * generic builder). Only text content is ever interpolated, always through escapeXml.
 */
import type { SqsWireError } from "./sqs-errors.js";

export const sqsXmlNamespace = "http://queue.amazonaws.com/doc/2012-11-05/";

/**
 * Characters that need escaping in text content. `\r` is escaped because XML parsers normalise a
 * raw CR (and CRLF) to LF, which would change a message body and break its MD5. Characters XML 1.0
 * can't carry at all (control characters, lone surrogates) can only come from error messages that
 * quote user input: they become U+FFFD.
 */
const escapeSource = /[&<>"'\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.source;
const needsEscape = new RegExp(escapeSource);
const escapeAll = new RegExp(escapeSource, "g");

const replacements: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  "\r": "&#xD;",
};

export function escapeXml(text: string): string {
  if (!needsEscape.test(text)) return text;
  return text.replace(escapeAll, (c) => replacements[c] ?? "\uFFFD");
}

/** `<name>escaped value</name>`, or nothing when the value is absent. */
export function xmlElement(name: string, value: string | number | boolean | undefined): string {
  if (value === undefined) return "";
  return `<${name}>${escapeXml(String(value))}</${name}>`;
}

/** A flattened string map: `<Entry><Name>k</Name><Value>v</Value></Entry>` per pair. */
export function xmlStringMap(entryName: string, keyName: string, valueName: string, map: Record<string, string> | undefined): string {
  if (!map) return "";
  let out = "";
  for (const key in map) out += `<${entryName}><${keyName}>${escapeXml(key)}</${keyName}><${valueName}>${escapeXml(map[key]!)}</${valueName}></${entryName}>`;
  return out;
}

/** The response envelope. `resultXml` undefined means the action has no result element. */
export function xmlResponse(action: string, resultXml: string | undefined, requestId: string): string {
  const result = resultXml === undefined ? "" : `<${action}Result>${resultXml}</${action}Result>`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${sqsXmlNamespace}">${result}<ResponseMetadata><RequestId>${escapeXml(requestId)}</RequestId></ResponseMetadata></${action}Response>`;
}

export function xmlErrorResponse(error: SqsWireError, requestId: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse xmlns="${sqsXmlNamespace}"><Error><Type>${error.fault}</Type>` +
    `<Code>${escapeXml(error.queryCode)}</Code><Message>${escapeXml(error.message)}</Message><Detail/></Error>` +
    `<RequestId>${escapeXml(requestId)}</RequestId></ErrorResponse>`
  );
}
