/**
 * The long-poll wake-up protocol (src/core/waiters.ts) on a manual clock. A "poller" reads the
 * queue's version, receives (finds nothing), then calls wait(version): these tests play both
 * the sleeping waiters and the pollers caught mid-receive by a notify.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import { QueueWaiters } from "../../src/core/waiters.js";

const q = 1;

function setup() {
  const clock = new ManualClock();
  const waiters = new QueueWaiters(clock);
  /** Starts a wait and reports whether (and when) it has resolved. */
  const sleep = (since: number, timeoutMs: number, wants = 10) => {
    const state = { done: false, atMs: 0 };
    void waiters.wait(q, since, timeoutMs, wants).then(() => {
      state.done = true;
      state.atMs = clock.nowMs();
    });
    return state;
  };
  const flush = () => new Promise((r) => setImmediate(r));
  return { clock, waiters, sleep, flush };
}

describe("QueueWaiters", () => {
  it("wakes sleeping waiters in arrival order until their appetite covers the count", async () => {
    const { waiters, sleep, flush } = setup();
    const v = waiters.version(q);
    const a = sleep(v, 20_000, 10);
    const b = sleep(v, 20_000, 10);
    const c = sleep(v, 20_000, 10);
    waiters.notify(q, 15);
    await flush();
    expect([a.done, b.done, c.done]).toEqual([true, true, false]);
    waiters.notify(q);
    await flush();
    expect(c.done).toBe(true);
  });

  it("a poller mid-receive re-polls for a wake-up no sleeping waiter took, and sleeps when one was taken", async () => {
    const { waiters, sleep, flush } = setup();
    const v = waiters.version(q);
    const sleeper = sleep(v, 20_000, 10);
    // A send of 10 while a second poller is mid-receive: the sleeper takes the wake-up…
    waiters.notify(q, 10);
    await flush();
    expect(sleeper.done).toBe(true);
    // …so the late poller (its receive started at v, before the send) goes to sleep.
    const late = sleep(v, 20_000, 10);
    await flush();
    expect(late.done).toBe(false);
    // With nobody asleep, the next send's wake-up is owed to a late poller: it re-polls at once.
    const v2 = waiters.version(q);
    waiters.notify(q, 1); // wakes `late` (asleep), nothing owed
    waiters.notify(q, 3); // nobody asleep: 3 owed
    const owed = sleep(v2, 20_000, 10);
    await flush();
    expect([late.done, owed.done]).toEqual([true, true]);
  });

  it("shares owed wake-ups by appetite: one notify of 1 re-polls one late poller, not all of them", async () => {
    const { waiters, sleep, flush } = setup();
    const v = waiters.version(q);
    waiters.notify(q, 1);
    const late = [sleep(v, 20_000, 10), sleep(v, 20_000, 10), sleep(v, 20_000, 10)];
    await flush();
    expect(late.map((p) => p.done)).toEqual([true, false, false]);
  });

  it("forgets owed wake-ups once a poller that saw the latest version found nothing", async () => {
    const { waiters, sleep, flush } = setup();
    const v = waiters.version(q);
    waiters.notify(q, 5);
    // A poller whose receive started after that notify saw its messages and found nothing.
    const current = sleep(waiters.version(q), 20_000, 1);
    const late = sleep(v, 20_000, 1);
    await flush();
    expect([current.done, late.done]).toEqual([false, false]);
  });

  it("count 0 (a delayed send) and no count send every late poller back, without waking sleepers on count 0", async () => {
    const { waiters, sleep, flush } = setup();
    const v = waiters.version(q);
    const sleeper = sleep(v, 20_000);
    waiters.notify(q, 0);
    const late = [sleep(v, 20_000), sleep(v, 20_000)];
    await flush();
    expect(sleeper.done).toBe(false);
    expect(late.map((p) => p.done)).toEqual([true, true]);
    waiters.notify(q);
    await flush();
    expect(sleeper.done).toBe(true);
  });

  it("notifyAt wakes just enough sleepers when the messages become visible, not before", async () => {
    const { clock, waiters, sleep, flush } = setup();
    const v = waiters.version(q);
    const t0 = clock.nowMs();
    const a = sleep(v, 20_000, 1);
    const b = sleep(v, 20_000, 1);
    const soon = sleep(v, 500, 1); // wakes before the messages anyway
    const c = sleep(v, 20_000, 1);
    waiters.notifyAt(q, t0 + 2_000, 3); // a, b and `soon` cover 3
    clock.advance(1_999);
    await flush();
    expect([a.done, b.done, c.done]).toEqual([false, false, false]);
    expect(soon.done).toBe(true);
    clock.advance(1);
    await flush();
    expect([a.done, b.done, c.done]).toEqual([true, true, false]);
    expect(a.atMs).toBe(t0 + 2_000);
    clock.advance(18_000);
    await flush();
    expect(c.done).toBe(true);
    expect(c.atMs).toBe(t0 + 20_000);
  });

  it("ends waits on timeout, on abort and on closeAll", async () => {
    const { clock, waiters, flush } = setup();
    const v = waiters.version(q);
    const results: string[] = [];
    void waiters.wait(q, v, 1_000, 1).then(() => results.push("timeout"));
    const controller = new AbortController();
    void waiters.wait(q, v, 20_000, 1, controller.signal).then(() => results.push("abort"));
    void waiters.wait(q, v, 20_000, 1).then(() => results.push("close"));
    clock.advance(1_000);
    await flush();
    controller.abort();
    await flush();
    expect(waiters.waiterCount(q)).toBe(1);
    waiters.closeAll();
    await flush();
    expect(results).toEqual(["timeout", "abort", "close"]);
    expect(waiters.waiterCount()).toBe(0);
  });

  it("a deleted queue's waiters wake, a later wait on it resolves at once, and the mark is dropped once older than its span", async () => {
    const { clock, waiters, sleep, flush } = setup();
    const asleep = sleep(waiters.version(q), 20_000);
    waiters.queueGone(q, 60_000);
    await flush();
    expect(asleep.done).toBe(true);
    expect(waiters.isGone(q)).toBe(true);
    // A poll that started on the queue just before it went, and waits only now.
    const late = sleep(waiters.version(q), 20_000);
    await flush();
    expect(late.done).toBe(true);
    // Marks older than the span go when the next queue is deleted; others stay.
    clock.advance(30_000);
    waiters.queueGone(2, 60_000);
    clock.advance(30_000);
    waiters.queueGone(3, 60_000);
    expect([waiters.isGone(q), waiters.isGone(2), waiters.isGone(3)]).toEqual([false, true, true]);
    expect(waiters.waiterCount()).toBe(0);
  });
});

