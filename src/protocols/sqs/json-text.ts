/**
 * Strings as JSON text, the same bytes JSON.stringify writes. A text without a quote, a
 * backslash, a control character or a surrogate needs no escaping, and finding that out costs a
 * third of JSON.stringify's own walk over its characters (docs/benchmarks-history.md).
 */
const mayNeedEscaping = /[\x00-\x1F\uD800-\uDFFF]/;

/** Whether JSON.stringify(text) is `"${text}"`. */
export function plainJsonString(text: string): boolean {
  return text.indexOf('"') === -1 && text.indexOf("\\") === -1 && !mayNeedEscaping.test(text);
}

export function jsonString(text: string): string {
  return plainJsonString(text) ? `"${text}"` : JSON.stringify(text);
}
