import type { MessageReceiveParams } from "./store.js";

/**
 * Calls made in one turn of the event loop, handed together to one `*Many` store call: how a
 * store that pays per statement (PostgreSQL) writes a turn's sends, receives or deletes as one.
 */
interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export class TurnBatch<T, R> {
  private pending: Array<Pending<T, R>> = [];

  /** `many` answers every item, in order; if it fails, every call of the turn fails with it. */
  constructor(private readonly many: (items: T[]) => Promise<R[]>) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(this.flush);
      this.pending.push({ item, resolve, reject });
    });
  }

  private readonly flush = (): void => {
    const calls = this.pending;
    this.pending = [];
    this.many(calls.map((c) => c.item)).then(
      (results) => calls.forEach((c, i) => c.resolve(results[i]!)),
      (err: unknown) => calls.forEach((c) => c.reject(err)),
    );
  };
}

/**
 * One call at a time through `many`. Calls that may share a statement are gathered per turn when
 * the store asks for it (Store.gathersTurns); the others, and every call to a store that groups
 * its commits itself, go at once, alone: a failure of one never fails another.
 */
export function oneAtATime<T, R>(gather: boolean, many: (items: T[]) => Promise<R[]>): (item: T, together: boolean) => Promise<R> {
  const alone = async (item: T): Promise<R> => (await many([item]))[0]!;
  if (!gather) return alone;
  const batch = new TurnBatch(many);
  return (item, together) => (together ? batch.add(item) : alone(item));
}

/** Whether a receive may share a statement with others: a plain one (no FIFO order, no dead-letter target to move to, no attempt to record). */
export function receiveShares(p: Pick<MessageReceiveParams, "fifo" | "deadLetter" | "attempt">): boolean {
  return !p.fifo && p.deadLetter === undefined && p.attempt === undefined;
}

/**
 * A messageReceiveMany's receives as a store that pays per statement writes them: the plain ones
 * of one queue, instant and retention bound together (in arrival order), every other alone.
 */
export function receivesTogether(receives: readonly MessageReceiveParams[]): { together: MessageReceiveParams[][]; alone: MessageReceiveParams[] } {
  const together = new Map<string, MessageReceiveParams[]>();
  const alone: MessageReceiveParams[] = [];
  for (const p of receives) {
    if (!receiveShares(p)) {
      alone.push(p);
      continue;
    }
    const key = `${p.queueId}:${p.nowMs}:${p.minSentAtMs}`;
    const same = together.get(key);
    if (same) same.push(p);
    else together.set(key, [p]);
  }
  return { together: [...together.values()], alone };
}
