/**
 * Message bodies: "<seq>:<sentAtMs>:" then padding to an exact byte size. The send time is the
 * load generator's own performance.now() — producers and consumers share one process and one
 * clock, so send→receive latency needs no clock sync and has sub-millisecond resolution.
 */

/** Padding cut from one preallocated string: the load generator should spend its CPU on I/O. */
const padding = "x".repeat(1 << 20);

export function makeBody(seq: number, sentAtMs: number, bodyBytes: number): string {
  const head = `${seq}:${sentAtMs.toFixed(3)}:`;
  if (head.length >= bodyBytes) return head;
  return head + padding.slice(0, bodyBytes - head.length);
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
