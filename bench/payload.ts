/**
 * Message bodies: "<seq>:<sentAtMs>:" then padding to an exact byte size. The send time is the
 * load generator's own performance.now() — producers and consumers share one process and one
 * clock, so send→receive latency needs no clock sync and has sub-millisecond resolution.
 */
import { randomBytes } from "node:crypto";

/** Padding cut from one preallocated string: the load generator should spend its CPU on I/O. */
const padding = "x".repeat(1 << 20);

export function makeBody(seq: number, sentAtMs: number, bodyBytes: number): string {
  const head = `${seq}:${sentAtMs.toFixed(3)}:`;
  if (head.length >= bodyBytes) return head;
  return head + padding.slice(0, bodyBytes - head.length);
}

/** Random base64 to cut incompressible padding from (the burst measures disk per message). */
const randomPadding = randomBytes(3 << 18).toString("base64");

/**
 * As makeBody, padded with random text from a per-message offset: a store that compresses (Redis's
 * AOF rewrite) would otherwise shrink the repeated padding and its disk per message mean nothing.
 */
export function makeIncompressibleBody(seq: number, sentAtMs: number, bodyBytes: number): string {
  const head = `${seq}:${sentAtMs.toFixed(3)}:`;
  if (head.length >= bodyBytes) return head;
  const n = bodyBytes - head.length;
  const at = (seq * 7919) % (randomPadding.length - n);
  return head + randomPadding.slice(at, at + n);
}

export interface ParsedBody {
  seq: number;
  sentAtMs: number;
}

export function parseBody(body: string): ParsedBody {
  const a = body.indexOf(":");
  const b = body.indexOf(":", a + 1);
  if (a <= 0 || b <= a) throw new Error(`not a bench message body: ${body.slice(0, 40)}`);
  return { seq: Number(body.slice(0, a)), sentAtMs: Number(body.slice(a + 1, b)) };
}
