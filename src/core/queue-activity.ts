/**
 * Per-queue throughput since the server started: messages sent (SQS sends, job submits and
 * retries) and completed (deleted by a consumer, or a job that succeeded or failed), counted in
 * fixed buckets of the injected clock. It feeds the dashboard's sparklines; memory is bounded by
 * queues × buckets, and a deleted queue's counts go with it. Keyed by queue id: two accounts'
 * queues of one name are two queues.
 */
import type { Clock } from "./clock.js";
import { limits } from "./limits.js";
import type { QueueObserver } from "./observer.js";

export type ActivityKind = "sent" | "completed";

/** The last complete buckets, oldest first (the bucket in progress is left out: it would dip). */
export interface QueueThroughput {
  bucketSeconds: number;
  sent: number[];
  completed: number[];
}

interface Ring {
  /** The bucket number (time / bucket length) of the newest slot written. */
  latest: number;
  sent: number[];
  completed: number[];
}

export class QueueActivity {
  private readonly byQueue = new Map<number, Ring>();
  private readonly bucketMs = limits.admin.activityBucketSeconds * 1000;
  /** The complete buckets reported, plus the one in progress. */
  private readonly slots = limits.admin.activityBuckets + 1;

  constructor(private readonly clock: Clock) {}

  record(queueId: number, kind: ActivityKind, count: number): void {
    if (count <= 0) return;
    const bucket = Math.floor(this.clock.nowMs() / this.bucketMs);
    let ring = this.byQueue.get(queueId);
    if (!ring) this.byQueue.set(queueId, (ring = { latest: bucket, sent: new Array<number>(this.slots).fill(0), completed: new Array<number>(this.slots).fill(0) }));
    this.advance(ring, bucket);
    ring[kind][bucket % this.slots]! += count;
  }

  throughput(queueId: number): QueueThroughput {
    const reported = this.slots - 1;
    const out: QueueThroughput = { bucketSeconds: limits.admin.activityBucketSeconds, sent: new Array<number>(reported).fill(0), completed: new Array<number>(reported).fill(0) };
    const ring = this.byQueue.get(queueId);
    if (!ring) return out;
    const current = Math.floor(this.clock.nowMs() / this.bucketMs);
    this.advance(ring, current);
    for (let i = 0; i < reported; i++) {
      const slot = (current - reported + i) % this.slots;
      if (slot < 0) continue; // before the epoch: only under a test clock
      out.sent[i] = ring.sent[slot]!;
      out.completed[i] = ring.completed[slot]!;
    }
    return out;
  }

  forget(queueId: number): void {
    this.byQueue.delete(queueId);
  }

  /** Zeroes the slots of buckets that passed with nothing recorded, up to `bucket`. */
  private advance(ring: Ring, bucket: number): void {
    if (bucket <= ring.latest) return;
    const steps = Math.min(bucket - ring.latest, this.slots);
    for (let b = bucket - steps + 1; b <= bucket; b++) {
      ring.sent[b % this.slots] = 0;
      ring.completed[b % this.slots] = 0;
    }
    ring.latest = bucket;
  }
}

/** `observer`, with what sends and deletes tell it also counted in `activity`. */
export function observingActivity(observer: QueueObserver, activity: QueueActivity): QueueObserver {
  return {
    ...observer,
    messagesSent(queue, count) {
      activity.record(queue.id, "sent", count);
      observer.messagesSent?.(queue, count);
    },
    messagesDeleted(queue, count) {
      activity.record(queue.id, "completed", count);
      observer.messagesDeleted?.(queue, count);
    },
  };
}
