/**
 * When a value read from the store may be kept in a cache that queueChanged notices drop: only
 * while no notice can have been missed (Notifier.epoch unchanged), and only if no drop came while
 * it was being read — it may be older than that change.
 */
import type { Notifier } from "./notifier.js";

/** What a read began under: `mayKeep` compares it after the read. */
export interface ReadStart {
  epoch: number | undefined;
  drops: number;
}

export class NoticeKept {
  /** Bumped by every drop. */
  private drops = 0;

  constructor(private readonly notifier: Pick<Notifier, "epoch">) {}

  /** Call before reading. */
  begin(): ReadStart {
    return { epoch: this.notifier.epoch, drops: this.drops };
  }

  /** After the read: the epoch to keep its value under, or undefined if it may not be kept. */
  mayKeep(start: ReadStart): number | undefined {
    return start.epoch !== undefined && start.epoch === this.notifier.epoch && start.drops === this.drops ? start.epoch : undefined;
  }

  /** Whether a value kept under `epoch` is still to be trusted. */
  trusted(epoch: number): boolean {
    return epoch === this.notifier.epoch;
  }

  /** Something kept was dropped (its notice came, or a write found it gone). */
  dropped(): void {
    this.drops++;
  }
}
