/**
 * Opaque strings the jobs API hands out: lease ids (they name the queue, so a completion finds its
 * queue's settings without reading the job first) and list cursors.
 */
import { fail } from "../errors.js";

const leasePattern = /^(\d{1,15})\.([A-Za-z0-9_-]{8,64})$/;

export function leaseIdOf(queueId: number, token: string): string {
  return `${queueId}.${token}`;
}

/** The queue a lease id names, or undefined for a malformed one (the store then answers LeaseMismatch). */
export function queueIdOfLease(leaseId: string): number | undefined {
  const m = leasePattern.exec(leaseId);
  return m ? Number(m[1]) : undefined;
}

export function encodeCursor(seq: number): string {
  return Buffer.from(`j1:${seq}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): number {
  const m = cursor.length <= 64 ? /^j1:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8")) : null;
  if (!m) fail("ValidationFailed", "cursor is not a cursor this API returned.");
  return Number(m[1]);
}
