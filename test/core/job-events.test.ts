import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../src/core/job.js";
import { JobEventHub } from "../../src/core/jobs/job-events.js";

/** Only what the hub routes on (job id and queue name) matters here. */
function eventFor(jobId: string, queueName = "q"): JobEvent {
  return { type: "job.succeeded", atMs: 0, job: { id: jobId, queueName } } as unknown as JobEvent;
}

describe("JobEventHub unsubscribe", () => {
  it("is idempotent: a second call leaves a later subscriber to the same job registered", () => {
    const hub = new JobEventHub();
    const seen: string[] = [];
    const goneFor: string[] = [];
    const first = hub.subscribe({ jobId: "j1" }, () => seen.push("first"), () => goneFor.push("first"));
    first();
    hub.subscribe({ jobId: "j1" }, () => seen.push("second"), () => goneFor.push("second"));
    first(); // again: must not drop "second"'s registration
    hub.publish(eventFor("j1"));
    hub.jobsGone(["j1"]);
    expect(seen).toEqual(["second"]);
    expect(goneFor).toEqual(["second"]);
    expect(hub.listenerCount()).toBe(1);
  });

  it("is idempotent for queue and catch-all subscriptions too", () => {
    const hub = new JobEventHub();
    const seen: string[] = [];
    const byQueue = hub.subscribe({ queueName: "q" }, () => seen.push("queue-1"));
    const all = hub.subscribe({}, () => seen.push("all-1"));
    byQueue();
    all();
    hub.subscribe({ queueName: "q" }, () => seen.push("queue-2"));
    hub.subscribe({}, () => seen.push("all-2"));
    byQueue();
    all();
    hub.publish(eventFor("j1", "q"));
    expect(seen.sort()).toEqual(["all-2", "queue-2"]);
    expect(hub.listenerCount()).toBe(2);
  });

  it("removes only its own subscription when the same functions are subscribed twice", () => {
    const hub = new JobEventHub();
    let events = 0;
    let gone = 0;
    const listener = (): void => void events++;
    const onGone = (): void => void gone++;
    const a = hub.subscribe({ jobId: "j1" }, listener, onGone);
    hub.subscribe({ jobId: "j1" }, listener, onGone);
    a();
    a();
    hub.publish(eventFor("j1"));
    hub.jobsGone(["j1"]);
    expect(events).toBe(1);
    expect(gone).toBe(1);
  });
});
