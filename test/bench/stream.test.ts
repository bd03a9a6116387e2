/** The stream comparison's flags and table (bench/stream-result.ts); the row itself runs with `npm run bench -- --compare stream`. */
import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../bench/args.js";
import { comparisons } from "../../bench/comparisons.js";
import { StreamHops } from "../../bench/stream-hops.js";
import { type StreamResult, streamCells } from "../../bench/stream-result.js";

describe("the stream comparison", () => {
  it("takes its flags, defaults to 50 jobs × 1,000 chunks/s × 10 s, and runs only when named", () => {
    const defaults = parseBenchArgs([], 2);
    if (defaults === "help") throw new Error("unexpected help");
    expect([defaults.workload.streamJobs, defaults.workload.streamRatePerSec, defaults.workload.streamSeconds, defaults.workload.streamWarmupSeconds]).toEqual([50, 1_000, 10, 1]);
    const short = parseBenchArgs(["--compare", "stream", "--stream-seconds", "1", "--stream-jobs", "5", "--stream-rate", "200", "--stream-warmup", "0"], 2);
    if (short === "help") throw new Error("unexpected help");
    expect([short.compare, short.workload.streamJobs, short.workload.streamRatePerSec, short.workload.streamSeconds, short.workload.streamWarmupSeconds]).toEqual([["stream"], 5, 200, 1, 0]);
    expect(() => parseBenchArgs(["--stream-seconds", "0"], 2)).toThrow(/--stream-seconds must be an integer ≥ 1, got 0/);
    expect(comparisons.find((c) => c.id === "stream")).toMatchObject({ onlyWhenNamed: true });
  });

  it("prints whether every chunk came in order and the p99 against the 50 ms target", () => {
    const latency = { count: 100, p50Ms: 5.25, p90Ms: 20, p99Ms: 61.5, maxMs: 120, meanMs: 9 };
    const base: StreamResult = { jobs: 50, ratePerJob: 1_000, seconds: 1, emitted: 50_000, received: 50_000, outOfOrder: 0, duplicates: 0, lost: 0, allInOrder: true, jobsSucceeded: 50, latency, targetP99Ms: 50, outputRequests: 1_200, outputRtt: { ...latency, p50Ms: 12, p99Ms: 30.25 }, hops: { emitToSent: { ...latency, p50Ms: 3, p99Ms: 14 }, sentToAnswered: { ...latency, p50Ms: 2.5, p99Ms: 20 }, answeredToReceived: { ...latency, p50Ms: -0.5, p99Ms: 4 } }, chunksPerSec: 48_000, serverCorePct: 48, loadGenCorePct: 70 };
    expect(streamCells([{ label: "Sluice", stream: base }])).toEqual([["Sluice", "50 × 1,000 × 1", "50,000", "yes", "0/0/0", "48,000", "5.25 / 61.5 / 120", "no (50 ms)", "1,200", "12.0 / 30.3", "3.00 / 14.0 · 2.50 / 20.0 · -0.50 / 4.00", "48%", "10", "70%", "–"]]);
    const bad = { ...base, lost: 3, outOfOrder: 1, allInOrder: false, latency: { ...latency, p99Ms: 40 } };
    expect(streamCells([{ label: "Sluice", stream: bad }])[0]!.slice(3, 8)).toEqual(["NO", "3/0/1", "48,000", "5.25 / 40.0 / 120", "yes (50 ms)"]);
    expect(streamCells([{ label: "no stream" }])).toEqual([]);
  });

  it("splits each chunk's emit → receive at the request that carried it", () => {
    const hops = new StreamHops(3);
    hops.sent("j", [[0, 10]], 11);
    hops.answered("j", [[0, 10]], 15);
    hops.sent("j", [[1, 12], [2, 14]], 15);
    hops.sent("j", [[1, 12], [2, 14]], 40); // a resend: the chunk waited from the first send
    hops.answered("j", [[1, 12], [2, 14]], 41);
    hops.received("j", 0, 10, 14); // the event came before the answer
    hops.received("j", 1, 12, 43);
    hops.received("j", 2, 14, 44);
    const s = hops.summary();
    expect([s.emitToSent.count, s.emitToSent.maxMs, s.sentToAnswered.maxMs, s.answeredToReceived.p50Ms]).toEqual([3, 3, 26, 2]);
    expect([s.emitToSent.p50Ms, s.sentToAnswered.p50Ms]).toEqual([1, 26]);
  });
});
