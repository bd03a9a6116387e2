/**
 * Queue records by account and name: the one cache of them (stores keep none). Every request reads
 * its queue, and a hit costs no store call. Core publishes a queueChanged notice after every queue
 * write; every node hears it (Store.notifier) and drops the record. Nothing is trusted while
 * notices could be missed (Notifier.epoch), and a read that overlapped a drop is not kept: it may
 * be older than the change. A send into a queue deleted on another node, before its notice comes,
 * is still refused by the store's write (Store.messageSendMany).
 */
import { NoticeKept } from "./notice-kept.js";
import type { Notifier } from "./notifier.js";
import type { QueueRecord } from "./queue.js";

interface Kept {
  queue: QueueRecord;
  epoch: number;
}

export class QueueRecords {
  /** By account, then name: no key to build per lookup. */
  private readonly byAccount = new Map<string, Map<string, Kept>>();
  private readonly kept: NoticeKept;

  constructor(notifier: Pick<Notifier, "epoch">) {
    this.kept = new NoticeKept(notifier);
  }

  /** The kept record, if it is still to be trusted. */
  hit(account: string, name: string): QueueRecord | undefined {
    const names = this.byAccount.get(account);
    const kept = names?.get(name);
    if (kept === undefined) return undefined;
    if (this.kept.trusted(kept.epoch)) return kept.queue;
    names!.delete(name);
    return undefined;
  }

  /** Reads through `read`, keeping what it found (frozen) if no drop came meanwhile. */
  async read(account: string, name: string, read: () => Promise<QueueRecord | undefined>): Promise<QueueRecord | undefined> {
    const start = this.kept.begin();
    const queue = await read();
    const epoch = this.kept.mayKeep(start);
    if (queue && epoch !== undefined) {
      let names = this.byAccount.get(account);
      if (!names) this.byAccount.set(account, (names = new Map()));
      names.set(name, { queue: Object.freeze(queue), epoch });
    }
    return queue;
  }

  /** A queue changed or went (its notice came, or a write found it gone). */
  drop(queueId: number): void {
    this.kept.dropped();
    for (const names of this.byAccount.values()) {
      for (const [name, kept] of names) if (kept.queue.id === queueId) names.delete(name);
    }
  }
}
