/** bench/burst.ts: the burst driver's accounting, on an in-memory peer; and its report table. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../bench/args.js";
import { type BurstPeer, dirBytes, percentiles, ratePerSec, runBurst } from "../../bench/burst.js";
import { makeIncompressibleBody, parseBody } from "../../bench/payload.js";
import { burstCells } from "../../bench/report.js";
import { burstRowResult } from "../../bench/peers/burst-row.js";

/** A queue in memory; `duplicateFirst` hands the first message out twice, as a redelivery would. */
function memoryPeer(duplicateFirst = false): BurstPeer & { probes: number; counts: number[] } {
  const queue: string[] = [];
  const peer = {
    probes: 0,
    counts: [] as number[],
    async send(bodies: string[]) {
      queue.push(...bodies);
    },
    async drain(consumers: number, onRemoved: (bodies: readonly string[]) => void, signal: AbortSignal) {
      if (duplicateFirst && queue[0] !== undefined) onRemoved([queue[0]]);
      await Promise.all(
        Array.from({ length: consumers }, async () => {
          while (!signal.aborted && queue.length > 0) {
            onRemoved(queue.splice(0, 10));
            await Promise.resolve();
          }
        }),
      );
    },
    async probe() {
      peer.probes++;
    },
    async countBacklog() {
      peer.counts.push(queue.length);
      return queue.length;
    },
    rssMiB: () => 100,
    diskBytes: () => 5_000,
  };
  return peer;
}

const options = { messages: 1_000, bodyBytes: 64, batchSize: 10, producers: 4, consumers: 3, idleSeconds: 0, probeIntervalMs: 1, phaseTimeoutMs: 60_000 };

describe("burst driver", () => {
  it("fills, counts the full backlog, drains every message once, and reports disk per message", async () => {
    const peer = memoryPeer();
    const r = await runBurst(peer, options, () => undefined);
    expect(r.messages).toBe(1_000);
    expect(r.lost).toBe(0);
    expect(r.duplicates).toBe(0);
    expect(r.count.lastValue).toBe(1_000);
    expect(peer.counts).toEqual([1_000]);
    expect(r.diskBytesPerMessage).toBe(5);
    expect(r.rssPeakMiB).toBe(100);
    expect(r.fillMsgsPerSec).toBeGreaterThan(0);
    expect(r.drainMsgsPerSec).toBeGreaterThan(0);
    expect(peer.probes).toBeGreaterThanOrEqual(1);
  });

  it("counts a message removed twice as a duplicate", async () => {
    const r = await runBurst(memoryPeer(true), options, () => undefined);
    expect(r.duplicates).toBe(1);
    expect(r.lost).toBe(0);
  });

  it("computes rates, percentiles and disk use", () => {
    expect(ratePerSec(50_000, 2_000)).toBe(25_000);
    expect(ratePerSec(10, 0)).toBeNaN();
    expect(percentiles([5, 1, 3, 2, 4])).toEqual({ count: 5, p50Ms: 3, p99Ms: 5, maxMs: 5 });
    expect(percentiles([]).count).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), "burst-test-"));
    dirs.push(dir);
    writeFileSync(join(dir, "a"), Buffer.alloc(10_000, 1));
    expect(dirBytes(dir)).toBeGreaterThanOrEqual(10_000);
    expect(dirBytes(join(dir, "missing"))).toBeUndefined();
  });

  it("pads bodies to the exact size with text that differs between messages", () => {
    const a = makeIncompressibleBody(1, 12.5, 1024);
    const b = makeIncompressibleBody(2, 12.5, 1024);
    expect(a.length).toBe(1024);
    expect(parseBody(a)).toEqual({ seq: 1, sentAtMs: 12.5 });
    expect(a.slice(-100)).not.toBe(b.slice(-100));
  });

  it("takes the burst's flags, and prints a row per peer", () => {
    const args = parseBenchArgs(["--burst-messages", "50000", "--burst-idle", "3", "--burst-consumers", "8"], 2);
    if (args === "help") throw new Error("unexpected help");
    expect([args.workload.burstMessages, args.workload.burstIdleSeconds, args.workload.burstConsumers]).toEqual([50_000, 3, 8]);
    expect(() => parseBenchArgs(["--burst-messages", "5"], 2)).toThrow(/--burst-messages must be an integer ≥ 10/);
    const p = { count: 3, p50Ms: 1.5, p99Ms: 20, maxMs: 250 };
    const burst = { messages: 50_000, fillMsgsPerSec: 5_000, drainMsgsPerSec: 6_000, idleSeconds: 3, probe: { fill: p, idle: p, drain: p }, probeErrors: 0, count: { ...p, lastValue: 50_000 }, rssPeakMiB: 200, diskBytesPerMessage: 1_414.2, lost: 0, duplicates: 0 };
    const row = burstRowResult({ peer: "sluice", label: "Sluice", durability: "", burst, notes: [] });
    expect(row.saturated.msgsPerSec).toBe(6_000);
    expect(burstCells({ rows: [row] })).toEqual([["Sluice", "5,000", "6,000", "1.50 / 20.0 / 250", "1.50 / 20.0 / 250", "1.50 / 20.0 / 250", "0", "1.50 / 250", "200", "1,414", "0/0"]]);
  });
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
