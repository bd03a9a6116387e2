/**
 * The worker's handler slots (`concurrency` of them): held by running handlers, reserved by lease
 * requests in flight for the jobs they may bring, and waited for by lease loops when none is free.
 */

/** A handler slot: held while its job runs, then released once — or handed over to the lease request that reports it. */
export class Slot {
  private released = false;
  constructor(private readonly onRelease: (wake: boolean) => void) {}
  release(wake = true): void {
    if (this.released) return;
    this.released = true;
    this.onRelease(wake);
  }
}

export class Slots {
  /** Slots held by units: a handler running, or (batch handlers, close) its outcome being reported. */
  private held = 0;
  /** Slots asked for by lease requests in flight (not yet running). */
  private reserved = 0;
  /** Lease loops waiting for a free slot. */
  private readonly waiters = new Set<() => void>();

  constructor(readonly concurrency: number) {}

  /** Slots neither held nor reserved: what a lease request may ask for. */
  get free(): number {
    return this.concurrency - this.held - this.reserved;
  }

  reserve(count: number): void {
    this.reserved += count;
  }

  unreserve(count: number): void {
    this.reserved -= count;
  }

  /** Holds a slot until the returned Slot is released; releasing it (with `wake`) wakes the waiting loops. */
  hold(): Slot {
    this.held++;
    return new Slot((wake) => {
      this.held--;
      if (wake) this.wake();
    });
  }

  /** Resolves at the next wake(): a slot was freed, or the worker is closing. */
  waitForFree(): Promise<void> {
    return new Promise<void>((resolve) => this.waiters.add(resolve));
  }

  wake(): void {
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }
}
