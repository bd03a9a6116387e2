/**
 * Time is injected everywhere so that tests never sleep on wall time.
 * A Clock gives "now" and schedules callbacks; ManualClock lets tests move time by hand.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  nowMs(): number;
  /** Runs `fn` once after `delayMs` (by this clock's notion of time). */
  setTimer(delayMs: number, fn: () => void): TimerHandle;
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  setTimer(delayMs, fn) {
    const t = setTimeout(fn, Math.max(0, delayMs));
    return { cancel: () => clearTimeout(t) };
  },
};

interface PendingTimer {
  dueMs: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that only moves when told to; timers fire during advance(). */
export class ManualClock implements Clock {
  private timers: PendingTimer[] = [];

  constructor(private currentMs = 1_700_000_000_000) {}

  nowMs(): number {
    return this.currentMs;
  }

  setTimer(delayMs: number, fn: () => void): TimerHandle {
    const timer: PendingTimer = { dueMs: this.currentMs + Math.max(0, delayMs), fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** Moves time forward, firing due timers in order. */
  advance(ms: number): void {
    const target = this.currentMs + ms;
    for (;;) {
      const due = this.timers
        .filter((t) => !t.cancelled && t.dueMs <= target)
        .sort((a, b) => a.dueMs - b.dueMs)[0];
      if (!due) break;
      this.currentMs = Math.max(this.currentMs, due.dueMs);
      due.cancelled = true;
      due.fn();
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.currentMs = target;
  }

  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
