/**
 * Wakes long-polling receivers the moment a message may be available — never a sleep loop.
 * A version counter per queue closes the race between "receive found nothing" and "start waiting":
 * a waiter that saw version v returns at once if the version moved on.
 */
import type { Clock, TimerHandle } from "./clock.js";

interface Waiter {
  resolve: () => void;
  timer: TimerHandle;
  wants: number;
}

export class QueueWaiters {
  private versions = new Map<number, number>();
  private waiting = new Map<number, Set<Waiter>>();
  private closed = false;

  constructor(private readonly clock: Clock) {}

  get isClosed(): boolean {
    return this.closed;
  }

  version(queueId: number): number {
    return this.versions.get(queueId) ?? 0;
  }

  /**
   * Signals that `count` messages may have become available. Wakes waiters in arrival order until
   * their combined appetite covers `count` (a woken waiter that fills up wakes the next one).
   */
  notify(queueId: number, count = Number.POSITIVE_INFINITY): void {
    this.versions.set(queueId, this.version(queueId) + 1);
    const set = this.waiting.get(queueId);
    if (!set) return;
    let remaining = count;
    for (const w of set) {
      if (remaining <= 0) break;
      remaining -= w.wants;
      this.release(queueId, w);
    }
  }

  /** Resolves when notified, when `timeoutMs` passes, on abort, or when closed. */
  wait(queueId: number, sinceVersion: number, timeoutMs: number, wants: number, signal?: AbortSignal): Promise<void> {
    if (this.closed || signal?.aborted || this.version(queueId) !== sinceVersion || timeoutMs <= 0) {
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        wants,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        timer: this.clock.setTimer(timeoutMs, () => this.release(queueId, waiter)),
      };
      const onAbort = (): void => this.release(queueId, waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      let set = this.waiting.get(queueId);
      if (!set) this.waiting.set(queueId, (set = new Set()));
      set.add(waiter);
    });
  }

  /** Releases every waiter (shutdown: long polls return empty). */
  closeAll(): void {
    this.closed = true;
    for (const [queueId, set] of this.waiting) for (const w of set) this.release(queueId, w);
  }

  waiterCount(queueId?: number): number {
    if (queueId !== undefined) return this.waiting.get(queueId)?.size ?? 0;
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }

  private release(queueId: number, w: Waiter): void {
    const set = this.waiting.get(queueId);
    if (!set?.delete(w)) return;
    if (set.size === 0) this.waiting.delete(queueId);
    w.timer.cancel();
    w.resolve();
  }
}
