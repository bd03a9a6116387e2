/** Per-queue throughput buckets on an injected clock (src/core/queue-activity.ts). */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { limits } from "../../src/core/limits.js";
import { QueueActivity, observingActivity } from "../../src/core/queue-activity.js";

const bucketMs = limits.admin.activityBucketSeconds * 1000;
const buckets = limits.admin.activityBuckets;

describe("QueueActivity", () => {
  it("reports complete buckets only, oldest first, and zero for buckets that saw nothing", () => {
    const clock = new ManualClock(1_000 * bucketMs);
    const activity = new QueueActivity(clock);
    activity.record(1, "sent", 3);
    activity.record(1, "completed", 1);
    expect(activity.throughput(1).sent.every((n) => n === 0)).toBe(true); // the bucket is still in progress
    clock.advance(bucketMs);
    activity.record(1, "sent", 2);
    clock.advance(2 * bucketMs);
    const t = activity.throughput(1);
    expect(t).toMatchObject({ bucketSeconds: limits.admin.activityBucketSeconds });
    expect(t.sent).toHaveLength(buckets);
    expect(t.sent.slice(-3)).toEqual([3, 2, 0]);
    expect(t.completed.slice(-3)).toEqual([1, 0, 0]);
    expect(activity.throughput(2).sent).toEqual(new Array(buckets).fill(0));
  });

  it("forgets what is older than its history, and a deleted queue's counts", () => {
    const clock = new ManualClock(1_000 * bucketMs);
    const activity = new QueueActivity(clock);
    activity.record(3, "sent", 5);
    clock.advance(buckets * bucketMs);
    expect(activity.throughput(3).sent[0]).toBe(5);
    clock.advance(bucketMs);
    expect(activity.throughput(3).sent).toEqual(new Array(buckets).fill(0));
    activity.record(3, "sent", 1);
    clock.advance(10 * buckets * bucketMs); // far past: every slot is stale
    activity.record(3, "completed", 4);
    clock.advance(bucketMs);
    expect(activity.throughput(3)).toMatchObject({ sent: new Array(buckets).fill(0), completed: [...new Array(buckets - 1).fill(0), 4] });
    activity.forget(3);
    expect(activity.throughput(3).completed).toEqual(new Array(buckets).fill(0));
  });
});

describe("observingActivity", () => {
  it("counts sends and deletes, and still tells the server's observer everything", () => {
    const clock = new ManualClock(1_000 * bucketMs);
    const activity = new QueueActivity(clock);
    const heard: string[] = [];
    const observer = observingActivity(
      {
        messagesSent: (q, n) => heard.push(`sent ${q.name} ${n}`),
        messagesDeleted: (q, n) => heard.push(`deleted ${q.name} ${n}`),
        messagesReceived: (q, n) => heard.push(`received ${q.name} ${n}`),
      },
      activity,
    );
    // Queue 3 is "q" in the server's own account; another account's "q" (queue 4) counts apart.
    const q = { id: 3, account: "", name: "q" };
    observer.messagesSent!(q, 3);
    observer.messagesSent!({ id: 4, account: "222222222222", name: "q" }, 7);
    observer.messagesReceived!(q, 2);
    observer.messagesDeleted!(q, 2);
    clock.advance(bucketMs);
    expect(heard).toEqual(["sent q 3", "sent q 7", "received q 2", "deleted q 2"]);
    expect([activity.throughput(3).sent.at(-1), activity.throughput(3).completed.at(-1)]).toEqual([3, 2]);
    expect(activity.throughput(4).sent.at(-1)).toBe(7);
    // With no observer of its own, the server still gets the counts.
    const bare = observingActivity({}, activity);
    bare.messagesDeleted!(q, 1);
    clock.advance(bucketMs);
    expect(activity.throughput(3).completed.at(-1)).toBe(1);
  });
});
