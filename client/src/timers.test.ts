/**
 * systemTimers on Node's own (faked) setTimeout: a delay past setTimeout's 2^31−1 ms limit
 * (~24.8 days) fires after the whole delay, not after 1 ms (which made a long job.wait() a
 * tight request loop).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "./timers.js";

afterEach(() => {
  vi.useRealTimers();
});

const dayMs = 24 * 3600 * 1000;

describe("systemTimers.schedule", () => {
  it("fires a 30-day delay after 30 days, and can cancel it in any step", () => {
    vi.useFakeTimers();
    let fired = 0;
    systemTimers.schedule(30 * dayMs, () => fired++);
    vi.advanceTimersByTime(10);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(30 * dayMs - 11);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);

    const cancel = systemTimers.schedule(60 * dayMs, () => fired++);
    vi.advanceTimersByTime(40 * dayMs); // past the first step
    cancel();
    vi.advanceTimersByTime(30 * dayMs);
    expect(fired).toBe(1);
  });

  it("fires ordinary delays once, on time", () => {
    vi.useFakeTimers();
    let fired = 0;
    systemTimers.schedule(100, () => fired++);
    vi.advanceTimersByTime(99);
    expect(fired).toBe(0);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(1);
  });
});
