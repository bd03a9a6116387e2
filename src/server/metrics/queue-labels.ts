/**
 * Bounded label cardinality for per-queue metrics: the first `limit` queues seen (by a counter,
 * or by a scrape walking queues in name order) get a label of their own for the life of the
 * process; every queue after them is summed under `otherQueuesLabel` (in its account). Every
 * per-queue series also carries its queue's `account` (the 12-digit id; the server's own for its
 * queues), so two accounts' queues of one name are two series. Message ids, job ids and receipt
 * handles are never labels.
 */

/** Not a valid queue name (parentheses), so it can't collide with a real queue. */
export const otherQueuesLabel = "(other)";

/** The labels of one queue's series. */
export interface QueueLabelSet {
  account: string;
  queue: string;
}

export class QueueLabels {
  /** By account id, then queue name. */
  private readonly labelled = new Map<string, Set<string>>();
  private count = 0;

  /** `ownAccountId`: the account id the store's "" account (the server's own) is reported as. */
  constructor(
    readonly limit: number,
    private readonly ownAccountId: string,
  ) {}

  /** The account id a store account ("" for the server's own) is reported as. */
  accountLabel(account: string): string {
    return account === "" ? this.ownAccountId : account;
  }

  /** The labels the queue `name` of `account` (the store's: "" is the server's own) is reported under. */
  of(account: string, name: string): QueueLabelSet {
    const accountId = this.accountLabel(account);
    let names = this.labelled.get(accountId);
    if (names?.has(name)) return { account: accountId, queue: name };
    if (this.count >= this.limit) return { account: accountId, queue: otherQueuesLabel };
    if (!names) this.labelled.set(accountId, (names = new Set()));
    names.add(name);
    this.count++;
    return { account: accountId, queue: name };
  }
}
