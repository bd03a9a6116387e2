/**
 * Ends held submits early when their client goes away (a lone `submit?wait`, or every entry of a
 * batch submit's). A plain object with a set of listeners, not an AbortController (an EventTarget
 * and a listener on the shutdown signal per request showed in the jobs bench's profile).
 * Shutdown needs no hook here: JobService.close() ends every hold.
 */
import type { FastifyReply } from "fastify";
import type { WaitSignal } from "../../core/index.js";
import { onClientGone } from "../http/client-gone.js";

class DisconnectSignal implements WaitSignal {
  aborted = false;
  /** One per hold: a lone held submit has one, a batch submit's entries share the signal. */
  private readonly listeners = new Set<() => void>();

  addEventListener(_type: "abort", listener: () => void): void {
    this.listeners.add(listener);
  }

  removeEventListener(_type: "abort", listener: () => void): void {
    this.listeners.delete(listener);
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const listener of [...this.listeners]) listener();
    this.listeners.clear();
  }
}

export function disconnectSignal(reply: FastifyReply): WaitSignal {
  const signal = new DisconnectSignal();
  onClientGone(reply.raw, () => signal.abort());
  return signal;
}
