/**
 * The earliest sign that a waiting request's client went away, for long polls and held waits.
 *
 * Why not just the response's 'close': Node emits it in the event loop's close phase, after the
 * I/O callbacks and the setImmediate callbacks of the same turn. A worker's long poll whose
 * connection had just closed was then still handed the job a submit wrote in that turn (the group
 * commit runs on setImmediate), and the job stayed leased to nobody until its lease ran out — 30 s
 * by default, seen as a 27 s stall after a worker's close() in bench/jobs-cpu-split.ts. The
 * socket's own 'end' (the client's FIN) or 'error' (a reset) arrive with the I/O itself.
 */
import type { ServerResponse } from "node:http";

/**
 * Calls `onGone` once if the client disconnects before `res` is finished (at once if it already
 * has). Nothing is called for a response that finishes; its listeners are then removed, so a
 * keep-alive socket serving many long polls doesn't collect them.
 */
export function onClientGone(res: ServerResponse, onGone: () => void): void {
  const socket = res.socket;
  if (!socket || socket.destroyed || socket.readableEnded) {
    if (!res.writableFinished) onGone();
    return;
  }
  let settled = false;
  const settle = (): void => {
    if (settled) return;
    settled = true;
    socket.off("end", settle);
    socket.off("error", settle);
    res.off("close", settle);
    if (!res.writableFinished) onGone();
  };
  socket.on("end", settle);
  socket.on("error", settle);
  // Also the end of every response, finished or not — a socket closed without 'end' or 'error'
  // included (the response's 'close' follows the socket's) — and the listeners go with it.
  res.on("close", settle);
}
