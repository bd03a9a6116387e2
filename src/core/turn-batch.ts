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
 * One call at a time through `many`: gathered per turn when the store asks for it
 * (Store.gathersTurns), else at once (a store that groups its commits itself: no extra turn).
 */
export function oneAtATime<T, R>(gather: boolean, many: (items: T[]) => Promise<R[]>): (item: T) => Promise<R> {
  if (gather) {
    const batch = new TurnBatch(many);
    return (item) => batch.add(item);
  }
  return async (item) => (await many([item]))[0]!;
}
