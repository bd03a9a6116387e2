/**
 * Queue records by name, kept while this node's listening connection is up: every queue write
 * (on any node) is followed by a queueChanged notice, which drops the record here. A request
 * then costs no queue read. Records are never trusted while notices could be missed — the
 * listening connection down, or re-made since the record was read — and a read that overlapped a
 * change is not kept (it may be older than the change). A send into a queue deleted on another
 * node, in the moment before the notice comes, is still refused: the foreign key checks it.
 */
import type { QueueRecord } from "../../core/queue.js";

/** What the cache needs of the notifier: which listening session is up, if any. */
export interface ListeningSession {
  /** Changes each time the listening connection is lost; undefined while it is down. */
  readonly listenEpoch: number | undefined;
}

export class QueueCache {
  private readonly byName = new Map<string, { queue: QueueRecord; epoch: number }>();
  /** Bumped by every drop: a read begun before one is not kept. */
  private changes = 0;

  constructor(private readonly session: ListeningSession) {}

  get(name: string): QueueRecord | undefined {
    const hit = this.byName.get(name);
    if (!hit) return undefined;
    if (hit.epoch === this.session.listenEpoch) return hit.queue;
    this.byName.delete(name);
    return undefined;
  }

  /** Reads through `read`, keeping what it found if nothing changed meanwhile. */
  async read(name: string, read: () => Promise<QueueRecord | undefined>): Promise<QueueRecord | undefined> {
    const cached = this.get(name);
    if (cached) return cached;
    const epoch = this.session.listenEpoch;
    const changes = this.changes;
    const queue = await read();
    if (queue && epoch !== undefined && epoch === this.session.listenEpoch && changes === this.changes) this.byName.set(name, { queue: Object.freeze(queue), epoch });
    return queue;
  }

  /** A queue changed or went (its notice came, or a write found it gone). */
  drop(queueId: number, queueName?: string): void {
    this.changes++;
    if (queueName !== undefined) this.byName.delete(queueName);
    for (const [name, hit] of this.byName) if (hit.queue.id === queueId) this.byName.delete(name);
  }
}
