/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` / `tracestate`
 * headers a job is submitted with, checked and kept as they were sent. A malformed one is refused
 * with a clear error rather than silently dropped, as every other bad input here is.
 */
import { fail } from "./errors.js";
import type { JobTrace } from "./job.js";

/** version-traceid-parentid-flags, lowercase hex; a later version may append `-…` fields. */
const traceparentPattern = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const allZeros = /^0+$/;
/** The spec's bounds: at most 32 list members in at most 512 characters. */
export const tracestateMaxLength = 512;
const tracestateMaxMembers = 32;
/** A list member: key (simple, or tenant@system) `=` value, value printable ASCII without `,` and `=`, no trailing space. */
const tracestateMember = /^[a-z0-9][_0-9a-z\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** The parsed parts of a valid traceparent. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  /** The trace-flags byte (bit 0: sampled). */
  flags: number;
}

/** A traceparent's parts, or undefined when it is not a valid one. */
export function parseTraceparent(value: string): TraceParent | undefined {
  const m = traceparentPattern.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === "ff" || allZeros.test(traceId!) || allZeros.test(spanId!)) return undefined;
  // Version 00 has exactly four fields; a later version may carry more after them.
  if (version === "00" && rest !== undefined) return undefined;
  return { traceId: traceId!, spanId: spanId!, flags: parseInt(flags!, 16) };
}

/** Whether a tracestate header is well formed (list members, commas, optional spaces around them). */
export function isValidTracestate(value: string): boolean {
  if (value.length > tracestateMaxLength) return false;
  const members = value.split(",").map((m) => m.trim()).filter((m) => m !== "");
  return members.length <= tracestateMaxMembers && members.every((m) => tracestateMember.test(m));
}

/**
 * The trace context of a submit's headers (undefined when it sent no traceparent); fails with
 * ValidationFailed naming the header when one is malformed. A tracestate without a traceparent
 * means nothing (the spec ignores it) and is dropped.
 */
export function traceContextOf(traceparent: string | undefined, tracestate: string | undefined): JobTrace | undefined {
  if (traceparent === undefined) return undefined;
  const parsed = parseTraceparent(traceparent);
  if (!parsed) fail("ValidationFailed", `traceparent ${JSON.stringify(traceparent.slice(0, 80))} is not a W3C trace context (version-traceid-parentid-flags in lowercase hex, ids not all zeros).`);
  const normalized = `00-${parsed.traceId}-${parsed.spanId}-${parsed.flags.toString(16).padStart(2, "0")}`;
  const state = tracestate?.trim();
  if (state === undefined || state === "") return { traceparent: normalized };
  if (!isValidTracestate(state)) fail("ValidationFailed", `tracestate is not a W3C tracestate list (at most ${tracestateMaxMembers} key=value members in ${tracestateMaxLength} characters).`);
  return { traceparent: normalized, tracestate: state };
}
