/**
 * The connections shutdown waits for. Once new requests are refused (503), the listener stays open
 * until the requests in flight are answered, so a client connecting meanwhile gets that 503, not a
 * refused connection; only then does the server close.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";

export interface InFlight {
  /**
   * Closes the idle kept-alive connections, then resolves once every connection that had sent a
   * request has closed (each answer during shutdown closes its connection), or after `timeoutMs`.
   */
  settled(timeoutMs: number): Promise<void>;
}

export function watchInFlight(server: Server): InFlight {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return {
    async settled(timeoutMs) {
      server.closeIdleConnections();
      // One that has sent nothing has no request to wait for (server close drops it).
      const busy = [...sockets].filter((socket) => socket.bytesRead > 0 && !socket.destroyed);
      if (busy.length === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(busy.map((socket) => new Promise((resolve) => socket.once("close", resolve)))),
        new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
      ]);
      clearTimeout(timer);
    },
  };
}
