/**
 * A Set for entries that come and go fast (a worker's running leases, its units of work), which
 * keeps its hash table young.
 *
 * Why not a plain long-lived Set: V8 grows and compacts a Set's table by allocating a new one
 * and leaving the old one behind still holding the entries it had. Once the Set has lived long
 * enough for its table to be in the old generation, every new table is allocated there too, and
 * each abandoned one keeps the entries of its moment alive until the next full GC — here, every
 * lease passing through, with its job and input (docs/benchmarks-history.md, "Garbage that
 * outlived its group"). Swapping in
 * a fresh Set every so many deletions keeps the table young, where an abandoned one costs nothing.
 */
export class ShortLivedSet<T> implements Iterable<T> {
  private set = new Set<T>();
  private deletions = 0;

  get size(): number {
    return this.set.size;
  }

  add(value: T): void {
    this.set.add(value);
  }

  delete(value: T): void {
    if (!this.set.delete(value)) return;
    // A fresh copy once the deletions outnumber what is left: copying stays a small share of the work.
    if (++this.deletions > 64 + 2 * this.set.size) {
      this.set = new Set(this.set);
      this.deletions = 0;
    }
  }

  [Symbol.iterator](): Iterator<T> {
    return this.set[Symbol.iterator]();
  }
}
