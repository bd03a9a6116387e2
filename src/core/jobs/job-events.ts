/**
 * In-process fan-out of job lifecycle events: Server-Sent Events subscribe to a job, a queue or
 * everything, and `GET /v1/jobs/{id}?wait=` subscribes to its job — so a completion wakes its
 * waiters directly, with no polling anywhere. Events are published after the store committed.
 * A job deleted with its queue gets no event at all: its subscribers are told it is gone instead.
 */
import type { JobEvent } from "../job.js";

/** `id` numbers events in publish order (the SSE `id:` line). */
export type JobEventListener = (event: JobEvent, id: number) => void;

export interface JobEventFilter {
  jobId?: string;
  queueName?: string;
}

export class JobEventHub {
  private readonly byJob = new Map<string, Set<JobEventListener>>();
  private readonly byQueue = new Map<string, Set<JobEventListener>>();
  private readonly everything = new Set<JobEventListener>();
  /** Job subscriptions' `onGone`, by job id. */
  private readonly goneByJob = new Map<string, Set<() => void>>();
  /** Numbers events for SSE `id:` lines. */
  private sequence = 0;

  constructor(private readonly onListenerError: (err: unknown) => void = () => {}) {}

  /**
   * Returns the unsubscribe function. `onGone` (a job's subscription only) is called if the job is
   * deleted with its queue (see jobsGone): no event will ever come, so whoever waits for one must
   * stop waiting. Either way the subscriber still unsubscribes. Unsubscribing is idempotent, and
   * touches only this subscription: each one is its own registration (the same function
   * subscribed twice is two), and a key's set is dropped only while it is still the one this
   * subscription joined (a later subscriber to the same job or queue may have made a new one).
   */
  subscribe(filter: JobEventFilter, listener: JobEventListener, onGone?: () => void): () => void {
    const set = this.setFor(filter, true)!;
    const registration: JobEventListener = (event, id) => listener(event, id);
    set.add(registration);
    const jobId = filter.jobId;
    const gone = jobId !== undefined && onGone !== undefined ? getOrCreate(this.goneByJob, jobId, true)! : undefined;
    const goneRegistration = onGone !== undefined ? (): void => onGone() : undefined;
    if (goneRegistration) gone?.add(goneRegistration);
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      set.delete(registration);
      if (set.size === 0) {
        if (jobId !== undefined) deleteIfSame(this.byJob, jobId, set);
        else if (filter.queueName !== undefined) deleteIfSame(this.byQueue, filter.queueName, set);
      }
      if (gone && goneRegistration) {
        gone.delete(goneRegistration);
        if (gone.size === 0) deleteIfSame(this.goneByJob, jobId!, gone);
      }
    };
  }

  /**
   * Only the job's deletion with its queue (see jobsGone): an event stream reads the events
   * themselves from the durable log. Returns the unsubscribe function (idempotent).
   */
  watchGone(jobId: string, onGone: () => void): () => void {
    const gone = getOrCreate(this.goneByJob, jobId, true)!;
    const registration = (): void => onGone();
    gone.add(registration);
    let watching = true;
    return () => {
      if (!watching) return;
      watching = false;
      gone.delete(registration);
      if (gone.size === 0) deleteIfSame(this.goneByJob, jobId, gone);
    };
  }

  /** These jobs were deleted (with their queue): calls their subscriptions' `onGone`. */
  jobsGone(jobIds: Iterable<string>): void {
    if (this.goneByJob.size === 0) return;
    for (const jobId of jobIds) {
      const set = this.goneByJob.get(jobId);
      if (!set) continue;
      for (const onGone of [...set]) {
        try {
          onGone();
        } catch (err) {
          this.onListenerError(err);
        }
      }
    }
  }

  publish(event: JobEvent): number {
    const id = ++this.sequence;
    for (const set of [this.byJob.get(event.job.id), this.byQueue.get(event.job.queueName), this.everything]) {
      if (!set) continue;
      for (const listener of [...set]) {
        try {
          listener(event, id);
        } catch (err) {
          this.onListenerError(err);
        }
      }
    }
    return id;
  }

  /** Whether an event of this job would reach anyone (a queue's or everything's stream counts). */
  hasListeners(jobId: string): boolean {
    return this.byJob.has(jobId) || this.byQueue.size > 0 || this.everything.size > 0;
  }

  get lastEventId(): number {
    return this.sequence;
  }

  listenerCount(): number {
    let n = this.everything.size;
    for (const s of this.byJob.values()) n += s.size;
    for (const s of this.byQueue.values()) n += s.size;
    return n;
  }

  private setFor(filter: JobEventFilter, create: boolean): Set<JobEventListener> | undefined {
    if (filter.jobId !== undefined) return getOrCreate(this.byJob, filter.jobId, create);
    if (filter.queueName !== undefined) return getOrCreate(this.byQueue, filter.queueName, create);
    return this.everything;
  }
}

function getOrCreate<K, V>(map: Map<K, Set<V>>, key: K, create: boolean): Set<V> | undefined {
  let set = map.get(key);
  if (!set && create) map.set(key, (set = new Set()));
  return set;
}

function deleteIfSame<K, V>(map: Map<K, Set<V>>, key: K, set: Set<V>): void {
  if (map.get(key) === set) map.delete(key);
}
