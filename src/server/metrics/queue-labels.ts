/**
 * Bounded label cardinality for per-queue metrics: the first `limit` queue names seen (by a
 * counter, or by a scrape walking queues in name order) get a label of their own for the life of
 * the process; every queue after them is summed under `otherQueuesLabel`. Message ids, job ids and
 * receipt handles are never labels.
 */

/** Not a valid queue name (parentheses), so it can't collide with a real queue. */
export const otherQueuesLabel = "(other)";

export class QueueLabels {
  private readonly labelled = new Set<string>();

  constructor(readonly limit: number) {}

  /** The label `queue` is reported under. */
  of(queue: string): string {
    if (this.labelled.has(queue)) return queue;
    if (this.labelled.size >= this.limit) return otherQueuesLabel;
    this.labelled.add(queue);
    return queue;
  }
}
