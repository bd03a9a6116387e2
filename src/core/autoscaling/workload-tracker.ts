/**
 * Per queue, over a sliding window on the injected clock: how many units of work arrived, and how
 * long the attempts that ended ran. One-second buckets, so memory per queue is fixed however busy
 * it is, and a queue that went quiet is forgotten once its window is empty.
 */
import type { Clock } from "../clock.js";

export const workloadWindowSeconds = 60;

interface Bucket {
  second: number;
  arrivals: number;
  serviceSeconds: number;
  services: number;
}

interface QueueWindow {
  buckets: Bucket[];
  /** When this queue was first seen: before a full window has passed, rates divide by the time seen. */
  firstSecond: number;
}

export interface WorkloadRates {
  arrivalsPerSecond: number;
  meanServiceSeconds: number | undefined;
}

export class WorkloadTracker {
  private readonly queues = new Map<string, QueueWindow>();

  constructor(
    private readonly clock: Clock,
    private readonly windowSeconds = workloadWindowSeconds,
  ) {}

  arrived(queue: string, count = 1): void {
    this.bucket(queue).arrivals += count;
  }

  served(queue: string, seconds: number): void {
    const b = this.bucket(queue);
    b.serviceSeconds += seconds;
    b.services++;
  }

  /** Drops queues with nothing left in their window (gone quiet, or deleted). */
  sweep(): void {
    const oldest = this.second() - this.windowSeconds;
    for (const [queue, w] of this.queues) {
      const newest = w.buckets[w.buckets.length - 1];
      if (!newest || newest.second < oldest) this.queues.delete(queue);
    }
  }

  rates(queue: string): WorkloadRates {
    const w = this.queues.get(queue);
    if (!w) return { arrivalsPerSecond: 0, meanServiceSeconds: undefined };
    const now = this.second();
    let arrivals = 0;
    let serviceSeconds = 0;
    let services = 0;
    // Whole seconds only: the last windowSeconds before the current one, which is still filling.
    for (const b of w.buckets) {
      if (b.second < now - this.windowSeconds || b.second >= now) continue;
      arrivals += b.arrivals;
      serviceSeconds += b.serviceSeconds;
      services += b.services;
    }
    const spanSeconds = Math.max(1, Math.min(this.windowSeconds, now - w.firstSecond));
    return { arrivalsPerSecond: arrivals / spanSeconds, meanServiceSeconds: services === 0 ? undefined : serviceSeconds / services };
  }

  private second(): number {
    return Math.floor(this.clock.nowMs() / 1000);
  }

  private bucket(queue: string): Bucket {
    const second = this.second();
    let w = this.queues.get(queue);
    if (!w) {
      w = { buckets: [], firstSecond: second };
      this.queues.set(queue, w);
    }
    const last = w.buckets[w.buckets.length - 1];
    if (last && last.second === second) return last;
    // Drop buckets that left the window: at most windowSeconds + 1 are ever kept.
    while (w.buckets.length > 0 && w.buckets[0]!.second < second - this.windowSeconds) w.buckets.shift();
    const b: Bucket = { second, arrivals: 0, serviceSeconds: 0, services: 0 };
    w.buckets.push(b);
    return b;
  }
}
