/**
 * Event streams read from the durable log (job-event-log.ts), never from memory: a subscriber
 * resumes from an id it saw (SSE Last-Event-ID) after a disconnect or a restart and gets every
 * later event once, in id order. One read of the log per wake-up serves every live subscriber of
 * this process: the feed is poked after each local commit that produced events (and, with many
 * nodes, on the notifier's job notices), reads what is new, and hands each subscriber its share.
 * A subscriber behind the feed (resuming) first replays from the log on its own, up to where the
 * feed is, then joins it — switching in the same turn as it checks, so no event falls in between.
 */
import { limits } from "../limits.js";
import type { JobEventLog, LoggedJobEvent } from "../job-event-log.js";

export interface EventFeedFilter {
  /** One account's events ("" is the server's own); absent: every account's. */
  account?: string;
  queueName?: string;
  jobId?: string;
}

export interface EventSubscription {
  /** Resolves once the subscriber has caught up with the feed (its replay is over). */
  readonly live: Promise<void>;
  close(): void;
}

interface Subscriber {
  filter: EventFeedFilter;
  /** The id of the last event handed over (or the one it resumed after). */
  position: number;
  listener: (event: LoggedJobEvent) => void;
  replaying: boolean;
  closed: boolean;
}

const page = limits.events.readPageMax;

function matches(filter: EventFeedFilter, e: LoggedJobEvent): boolean {
  return (
    (filter.jobId === undefined || filter.jobId === e.jobId) &&
    (filter.queueName === undefined || filter.queueName === e.queueName) &&
    (filter.account === undefined || filter.account === (e.job.account ?? ""))
  );
}

export class JobEventFeed {
  private readonly subscribers = new Set<Subscriber>();
  /** The last id the feed has read and handed out; undefined while idle (no subscriber). */
  private headId: number | undefined;
  private starting: Promise<number> | undefined;
  private reading: Promise<void> | undefined;
  private pokedWhileReading = false;

  constructor(
    private readonly log: JobEventLog,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** The log's latest id now: where a fresh subscriber (no Last-Event-ID) starts. */
  async latestId(): Promise<number> {
    return (await this.log.jobEventBounds()).headId;
  }

  /** The latest pruned id: a subscriber resuming below it has missed events that are gone. */
  async prunedThroughId(): Promise<number> {
    return (await this.log.jobEventBounds()).floorId;
  }

  /** Events with ids after `afterId` matching `filter`, in order, until close(). */
  subscribe(filter: EventFeedFilter, afterId: number, listener: (event: LoggedJobEvent) => void): EventSubscription {
    const sub: Subscriber = { filter, position: afterId, listener, replaying: true, closed: false };
    this.subscribers.add(sub);
    const live = this.catchUp(sub).catch((err: unknown) => {
      this.onError(err);
      this.unsubscribe(sub);
      throw err;
    });
    return {
      live,
      close: () => this.unsubscribe(sub),
    };
  }

  /** Events may have been appended: read them (once per turn, however many pokes). */
  poke(): void {
    if (this.headId === undefined || this.subscribers.size === 0) return;
    if (this.reading) {
      this.pokedWhileReading = true;
      return;
    }
    this.reading = this.readNew()
      .catch(this.onError)
      .finally(() => {
        this.reading = undefined;
        if (this.pokedWhileReading) {
          this.pokedWhileReading = false;
          this.poke();
        }
      });
  }

  /** Subscribers, replaying or live (tests, and to skip work when nobody listens). */
  get size(): number {
    return this.subscribers.size;
  }

  private unsubscribe(sub: Subscriber): void {
    sub.closed = true;
    this.subscribers.delete(sub);
    // Idle: forget the head, so a later first subscriber doesn't make the feed read what it missed.
    if (this.subscribers.size === 0) this.headId = undefined;
  }

  private async head(): Promise<number> {
    if (this.headId !== undefined) return this.headId;
    this.starting ??= this.latestId().finally(() => (this.starting = undefined));
    const id = await this.starting;
    this.headId ??= id;
    return this.headId;
  }

  /** Replays from the log up to the feed's head, again while the head moved meanwhile, then joins. */
  private async catchUp(sub: Subscriber): Promise<void> {
    for (;;) {
      const target = await this.head();
      while (!sub.closed && sub.position < target) {
        const events = await this.log.jobEventList({ afterId: sub.position, throughId: target, limit: page, ...sub.filter });
        for (const e of events) this.deliver(sub, e);
        if (events.length < page) break;
      }
      if (sub.closed) return;
      // The feed may have handed out events past `target` while this read: go again. Otherwise
      // join now, in this turn, before the feed can hand out anything else.
      if (this.headId === undefined || this.headId > target) continue;
      sub.position = Math.max(sub.position, target);
      sub.replaying = false;
      this.poke();
      return;
    }
  }

  private async readNew(): Promise<void> {
    for (;;) {
      const afterId = this.headId;
      if (afterId === undefined) return;
      const events = await this.log.jobEventList({ afterId, limit: page });
      if (this.headId === undefined) return; // idle meanwhile
      for (const e of events) {
        this.headId = Math.max(this.headId, e.id);
        for (const sub of this.subscribers) if (!sub.replaying && matches(sub.filter, e)) this.deliver(sub, e);
      }
      if (events.length < page) return;
    }
  }

  private deliver(sub: Subscriber, e: LoggedJobEvent): void {
    if (sub.closed || e.id <= sub.position) return;
    sub.position = e.id;
    try {
      sub.listener(e);
    } catch (err) {
      this.onError(err);
    }
  }
}
