/** bench/report.ts: ratios against the baseline, and against the extra peers a comparison names. */
import { describe, expect, it } from "vitest";
import type { PhaseResult } from "../../bench/phase.js";
import { comparisonResult } from "../../bench/report.js";
import type { Comparison, PeerId, RowResult } from "../../bench/row.js";
import { rabbitConsumers } from "../../bench/peers/rabbitmq.js";

function phase(msgsPerSec: number): PhaseResult {
  return { label: "x", messages: 1, elapsedMs: 1, msgsPerSec, latency: { count: 1, p50Ms: 1, p90Ms: 1, p99Ms: 1, maxMs: 1, meanMs: 1 }, duplicates: 0, lost: 0 };
}

function row(peer: PeerId, label: string, msgsPerSec: number): RowResult {
  return { peer, label, durability: "", saturated: phase(msgsPerSec), cpu: { loadGenCorePct: 0 }, notes: [] };
}

const noRun = async (): Promise<RowResult> => await Promise.reject(new Error("not run"));

describe("bench report ratios", () => {
  it("rates every row against the baseline, and the other rows against alsoAgainst peers", () => {
    const c: Comparison = {
      id: "c",
      title: "t",
      rows: [],
      baseline: "bullmq",
      alsoAgainst: ["rabbitmq"],
    };
    const rows = [row("sluice", "Sluice", 9_000), row("bullmq", "BullMQ", 6_000), row("rabbitmq", "RabbitMQ", 12_000)];
    const ratios = comparisonResult(c, rows, rows).ratios.map((r) => [r.name, r.msgsPerSec]);
    expect(ratios).toEqual([
      ["sluice/bullmq", 1.5],
      ["rabbitmq/bullmq", 2],
      ["sluice/rabbitmq", 0.75],
    ]);
  });

  it("rates two rows of the baseline's own peer against each other, as before", () => {
    const c: Comparison = { id: "c", title: "t", rows: [{ peer: "sluice", label: "a", run: noRun }], baseline: "sluice" };
    const rows = [row("sluice", "plain", 100), row("sluice", "limits", 80)];
    expect(comparisonResult(c, rows, rows).ratios.map((r) => [r.name, r.msgsPerSec])).toEqual([["limits/sluice", 0.8]]);
  });
});

describe("RabbitMQ workload mapping", () => {
  it("gives as many messages in flight as the SQS consumers (prefetch 100)", () => {
    expect(rabbitConsumers({ consumers: 64, batchSize: 10 })).toBe(7);
    expect(rabbitConsumers({ consumers: 1, batchSize: 10 })).toBe(1);
  });
});
