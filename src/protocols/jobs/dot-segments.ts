/**
 * A job id or queue name that is `.` or `..` cannot travel as itself in a URL path: URL parsers
 * (WHATWG's, so every fetch) remove such dot segments, percent-encoded as %2E or not, and the
 * request reaches another route. Clients (the SDK: client/src/paths.ts) percent-encode such a
 * segment twice, `%252E%252E`; the router decodes it once, to `%2E%2E`, and this reads it back as
 * the dots it stands for, so the request is answered as one naming `..` (JobNotFound for a job
 * id, ValidationFailed for a queue name). A raw `%2E%2E` or `..` that reaches the server intact
 * already decodes to `..`.
 */
const escapedDots = /^(?:%2e){1,2}$/i;

export function unescapeDotSegment(value: string): string {
  return escapedDots.test(value) ? ".".repeat(value.length / 3) : value;
}

/** Rewrites the request's path parameters in place (a preValidation hook, before the schemas). */
export function unescapeDotSegmentParams(params: unknown): void {
  if (typeof params !== "object" || params === null) return;
  const record = params as Record<string, unknown>;
  for (const [name, value] of Object.entries(record)) {
    if (typeof value === "string") record[name] = unescapeDotSegment(value);
  }
}
