/**
 * The Notifier: how every handle on one database — every node sharing a store — hears of what
 * the others wrote, so a long poll on one node is woken by a send on another, a held `?wait` or
 * an event stream sees a job finished elsewhere, and core's cached queue records are dropped. Part of the
 * Store contract (Store.notifier); core publishes after each write commits and subscribes once
 * per service. An in-process store delivers to its own subscribers (InProcessNotifier); a store
 * shared by processes also carries notices between them (PostgreSQL: LISTEN/NOTIFY).
 */
import type { JobChange } from "./job-store.js";
import type { JobEventType, JobRecord } from "./job.js";

export type StoreNotice =
  /**
   * `count` messages of the queue are visible from `visibleAtMs` on: now (a send, a retried job,
   * a dead-lettered message), or later (a delay, a visibility change, a retry's backoff).
   */
  /** `everyone`: every poller of the queue looks, not only `count` of them (jobs with requires). */
  | { kind: "messagesVisible"; queueId: number; count: number; visibleAtMs: number; everyone?: boolean }
  /**
   * A job transition committed, with the lifecycle events it produced at `atMs`. `job` is the
   * record after it; a notifier that crosses processes may leave it out (a job can be MiBs), and
   * a subscriber then reads the job itself. `version` orders one job's notices when the store
   * counts its changes (JobChange.version); a notifier that crosses processes drops a notice
   * older than one it already delivered for that job.
   */
  | { kind: "jobChanged"; jobId: string; events: readonly JobEventType[]; atMs: number; job?: JobRecord; version?: number }
  /**
   * A queue's config, tags or job settings changed, or the queue was deleted — with the live
   * jobs its deletion took along (nobody else will tell their waiters they are gone).
   */
  | { kind: "queueChanged"; queueId: number; queueName: string; deleted?: { liveJobIds: readonly string[] } };

export type NoticeListener = (notice: StoreNotice) => void;

export interface Notifier {
  /**
   * Called after the write the notice tells of has committed. Every subscriber of every handle on
   * the database hears it once — this handle's own synchronously, before publish returns, so
   * the caller's next step already sees its effect; others when their transport brings it.
   * Notices are hints: one lost between processes delays a waiter to its timer, never loses data.
   */
  publish(notice: StoreNotice): void;
  /** Returns the unsubscribe function. A listener must not throw. */
  subscribe(listener: NoticeListener): () => void;
  /**
   * Whether every handle's notices are being heard: a number that changes whenever some could
   * have been missed since (a lost connection re-made), undefined while they may be missed now.
   * What core keeps because of notices (queue records) is trusted only while it stays the same.
   */
  readonly epoch: number | undefined;
}

/** A notifier whose subscribers all live in this process: publish calls each, in subscription order. */
export class InProcessNotifier implements Notifier {
  private listeners: NoticeListener[] = [];
  /** Nothing is carried between processes, so nothing is ever missed. */
  readonly epoch = 0;

  publish(notice: StoreNotice): void {
    for (const listener of this.listeners) listener(notice);
  }

  subscribe(listener: NoticeListener): () => void {
    // A new array each time: a listener unsubscribing during publish doesn't skip its neighbour.
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }
}

/** Tells of committed job transitions (a change without events tells of nothing). */
export function publishJobChanges(notifier: Notifier, changes: readonly JobChange[], atMs: number): void {
  for (const { job, events, version, followOn } of changes) {
    if (events.length > 0) notifier.publish({ kind: "jobChanged", jobId: job.id, events, atMs, job, version });
    // A finished parent's children, moved in the same write (dependsOn).
    if (followOn) publishJobChanges(notifier, followOn, atMs);
  }
}
