/**
 * Idempotency keys (IETF draft-ietf-httpapi-idempotency-key-header): a retried submit with the
 * same key and the same body gets the job the first one created; the same key with another body
 * is a client bug (422). The body is compared by the SHA-256 of its canonical JSON, so the order
 * in which a client serializes object keys doesn't matter.
 */
import { createHash } from "node:crypto";
import { fail } from "../errors.js";
import { limits } from "../limits.js";

/** JSON with object keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function requestFingerprint(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("base64url");
}

const keyPattern = /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/;
/** The inside of an RFC 8941 string: printable ASCII, with `"` and `\` only as escapes `\"`, `\\`. */
const sfStringContent = /^(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*$/;

/**
 * The header's value as a key. The draft defines it as a structured-field string (`"abc"`);
 * most clients send it bare (`abc`): both are accepted and mean the same key.
 */
export function parseIdempotencyKey(header: string): string {
  let key = header.trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) {
    const inner = key.slice(1, -1);
    // An sf-string: a quote or backslash inside must be escaped (`"a"b"` is no string at all).
    if (!sfStringContent.test(inner)) fail("ValidationFailed", 'Idempotency-Key in quotes must be a structured-field string: escape " and \\ inside it with \\.');
    key = inner.replace(/\\(["\\])/g, "$1");
  }
  if (key.length < 1 || key.length > limits.jobs.idempotencyKeyMaxLength || !keyPattern.test(key)) {
    fail("ValidationFailed", `Idempotency-Key must be 1–${limits.jobs.idempotencyKeyMaxLength} printable ASCII characters.`);
  }
  return key;
}
