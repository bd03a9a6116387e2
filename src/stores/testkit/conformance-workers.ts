/** Conformance cases for the workers table: upserts by (account, worker, queue, node), the recent rows of an account, pruning. */
import { expect } from "vitest";
import type { WorkerSighting } from "../../core/worker-store.js";
import type { ConformanceContext } from "./conformance-context.js";
import { T0 } from "./conformance-context.js";

export function registerWorkerCases({ store, test }: ConformanceContext): void {
  const sighting = (over: Partial<WorkerSighting>): WorkerSighting => ({ account: "", workerId: "w-1", queueName: "q", nodeId: "n-1", running: 0, lastSeenAtMs: T0, ...over });

  test("workers: a row per account, worker, queue and node, replaced by its next sighting; listed by worker, recent ones only", async () => {
    await store().workerUpsertMany({
      rows: [
        sighting({ workerId: "w-2", labelsJson: '{"gpu":"a100"}', running: 2 }),
        sighting({ queueName: "other", lastSeenAtMs: T0 - 120_000 }),
        sighting({ nodeId: "n-2", running: 1 }),
        sighting({ account: "111111111111", workerId: "w-9" }),
      ],
    });
    await store().workerUpsertMany({ rows: [sighting({ workerId: "w-2", running: 0, lastSeenAtMs: T0 + 5 })] });
    const rows = await store().workerList({ account: "", sinceMs: T0 - 60_000, limit: 100 });
    expect(rows.map((r) => [r.workerId, r.queueName, r.nodeId, r.running, r.lastSeenAtMs, r.labelsJson])).toEqual([
      ["w-1", "q", "n-2", 1, T0, undefined],
      ["w-2", "q", "n-1", 0, T0 + 5, undefined],
    ]);
    expect((await store().workerList({ account: "111111111111", sinceMs: 0, limit: 100 })).map((r) => r.workerId)).toEqual(["w-9"]);
    expect(await store().workerList({ account: "", sinceMs: 0, limit: 1 })).toHaveLength(1);
  });

  test("workers: pruning deletes rows last seen before a time, a slice at a time", async () => {
    await store().workerUpsertMany({ rows: [sighting({ workerId: "old-1", lastSeenAtMs: 1 }), sighting({ workerId: "old-2", lastSeenAtMs: 2 }), sighting({ workerId: "new", lastSeenAtMs: T0 })] });
    expect(await store().workerPrune({ beforeMs: 10, limit: 1 })).toBe(1);
    expect(await store().workerPrune({ beforeMs: 10, limit: 10 })).toBe(1);
    expect((await store().workerList({ account: "", sinceMs: 0, limit: 10 })).map((r) => r.workerId)).toEqual(["new"]);
  });
}
