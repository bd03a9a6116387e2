/**
 * Calls made in one turn of the event loop, handed together to one function (which answers each):
 * how several requests' writes become one statement and one commit.
 */
export interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

export class TurnBatch<T, R> {
  private pending: Array<Pending<T, R>> = [];

  /** `write` settles every call it is given. */
  constructor(private readonly write: (calls: Array<Pending<T, R>>) => Promise<void>) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ item, resolve, reject });
    });
  }

  private flush(): void {
    const calls = this.pending;
    this.pending = [];
    this.write(calls).catch((err: unknown) => {
      for (const c of calls) c.reject(err);
    });
  }
}
