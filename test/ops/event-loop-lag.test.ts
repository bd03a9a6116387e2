/**
 * The event-loop lag sampler's decisions, fed lateness samples directly (no timers): every sample
 * goes into the histogram, and only a stall at or past the threshold is logged, once per stall.
 */
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { eventLoopLagMetric, lagSampleHandler, lagWarnMs } from "../../src/server/metrics/event-loop-lag.js";
import { sample } from "../support/metrics-text.js";

describe("event-loop lag", () => {
  it("observes every sample in seconds and warns once per stall past the threshold", async () => {
    const registry = new Registry();
    const warned: number[] = [];
    const onSample = lagSampleHandler({ observe: eventLoopLagMetric(registry), warn: (ms) => warned.push(ms) });
    for (const lateMs of [0, 3, lagWarnMs - 1, lagWarnMs, 3_800, 2]) onSample(lateMs);
    expect(warned).toEqual([lagWarnMs, 3_800]);
    const text = await registry.metrics();
    expect(sample(text, "sluice_event_loop_lag_seconds_count")).toBe(6);
    expect(sample(text, "sluice_event_loop_lag_seconds_bucket", { le: "0.25" })).toBe(3);
    expect(sample(text, "sluice_event_loop_lag_seconds_bucket", { le: "2.5" })).toBe(5);
    expect(sample(text, "sluice_event_loop_lag_seconds_sum")).toBeCloseTo((0 + 3 + lagWarnMs - 1 + lagWarnMs + 3_800 + 2) / 1000, 6);
  });

  it("takes another threshold", () => {
    const warned: number[] = [];
    const onSample = lagSampleHandler({ observe: () => {}, warn: (ms) => warned.push(ms), warnMs: 50 });
    for (const lateMs of [49, 50, 10]) onSample(lateMs);
    expect(warned).toEqual([50]);
  });
});
