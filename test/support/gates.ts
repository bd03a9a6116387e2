/** What SDK tests hold the code under test with: a promise opened by hand, and timers moved by hand. */
import type { Timers } from "../../client/src/index.js";

/** A promise the test resolves when it chooses (`open`), to hold a handler or a request at a point. */
export function gate<T = void>(): { promise: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Timers that fire only when the test moves them. */
export class ManualTimers implements Timers {
  private now = 0;
  private pending: { at: number; fn: () => void; live: boolean }[] = [];
  nowMs(): number {
    return this.now;
  }
  schedule(delayMs: number, fn: () => void): () => void {
    const t = { at: this.now + delayMs, fn, live: true };
    this.pending.push(t);
    return () => void (t.live = false);
  }
  advance(ms: number): void {
    this.now += ms;
    for (const t of this.pending.filter((p) => p.live && p.at <= this.now).sort((a, b) => a.at - b.at)) {
      t.live = false;
      t.fn();
    }
  }
}
