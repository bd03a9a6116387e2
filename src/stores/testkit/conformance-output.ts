/**
 * Conformance cases for streamed output (JobStore.jobOutputAppend / jobOutputRead): chunks kept
 * under a live lease only, indexes counted per attempt, one job.output event per request in the
 * same write, reads of the latest attempt, and the chunks gone with their job.
 */
import { expect } from "vitest";
import type { ConformanceContext } from "./conformance-context.js";
import { T0, act } from "./conformance-context.js";
import { expectCode, jobCaseKit } from "./conformance-jobs-kit.js";
import { outputLimits } from "../../core/jobs/output-chunks.js";

export function registerOutputCases({ store, test }: ConformanceContext): void {
  const kit = jobCaseKit(store);

  test("output: chunks append under a live lease, each request one job.output event", async () => {
    const q = await kit.makeQueue();
    const { job } = await kit.submit(q);
    const token = `${q.id}.out1`;
    await kit.lease(q, { token, nowMs: T0 + 10, leaseSeconds: 30 });
    const before = (await store().jobEventBounds()).headId;
    const first = await store().jobOutputAppend({ id: job.id, leaseToken: token, nowMs: T0 + 20, chunksJson: '["a",{"b":1}]', count: 2 });
    expect([first.index, first.total, first.change.events]).toEqual([0, 2, ["job.output"]]);
    const second = await store().jobOutputAppend({ id: job.id, leaseToken: token, nowMs: T0 + 30, chunksJson: "[3]", count: 1 });
    expect([second.index, second.total]).toEqual([2, 3]);
    const events = await store().jobEventList({ afterId: before, limit: 10 });
    expect(events.map((e) => [e.type, e.atMs, e.output])).toEqual([
      ["job.output", T0 + 20, { attempt: 1, index: 0, chunksJson: '["a",{"b":1}]' }],
      ["job.output", T0 + 30, { attempt: 1, index: 2, chunksJson: "[3]" }],
    ]);
    expect(events[0]!.job.status).toBe("running");
    expect(events[0]!.job.outputJson).toBeUndefined();
    expect(await store().jobOutputRead({ id: job.id, fromIndex: 0, limit: 10 })).toEqual({ attempt: 1, chunksJson: ['"a"', '{"b":1}', "3"], total: 3 });
    expect(await store().jobOutputRead({ id: job.id, fromIndex: 1, limit: 1 })).toEqual({ attempt: 1, chunksJson: ['{"b":1}'], total: 3 });
    expect(await store().jobOutputRead({ id: job.id, fromIndex: 3, limit: 10 })).toEqual({ attempt: 1, chunksJson: [], total: 3 });
    expect(await store().jobOutputRead({ id: "00000000-0000-4000-9000-ffffffffffff", fromIndex: 0, limit: 10 })).toBeUndefined();
  });

  test("output: refused without a live lease (nothing written); a new attempt starts at 0", async () => {
    const q = await kit.makeQueue();
    const { job } = await kit.submit(q);
    await kit.lease(q, { token: `${q.id}.a1`, nowMs: T0, leaseSeconds: 1 });
    await store().jobOutputAppend({ id: job.id, leaseToken: `${q.id}.a1`, nowMs: T0 + 1, chunksJson: '["x"]', count: 1 });
    const head = (await store().jobEventBounds()).headId;
    await expectCode(store().jobOutputAppend({ id: job.id, leaseToken: `${q.id}.wrong`, nowMs: T0 + 2, chunksJson: '["y"]', count: 1 }), "LeaseMismatch");
    await expectCode(store().jobOutputAppend({ id: job.id, leaseToken: `${q.id}.a1`, nowMs: T0 + 1_000, chunksJson: '["y"]', count: 1 }), "LeaseExpired");
    await expectCode(store().jobOutputAppend({ id: "00000000-0000-4000-9000-ffffffffffff", leaseToken: "x", nowMs: T0 + 2, chunksJson: '["y"]', count: 1 }), "JobNotFound");
    expect((await store().jobEventBounds()).headId).toBe(head);
    expect((await store().jobOutputRead({ id: job.id, fromIndex: 0, limit: 10 }))!.chunksJson).toEqual(['"x"']);
    await act(store(), { kind: "expire", ...kit.policy(), id: job.id, nowMs: T0 + 1_000 });
    await kit.lease(q, { token: `${q.id}.a2`, nowMs: T0 + 100_000 });
    expect(await store().jobOutputRead({ id: job.id, fromIndex: 0, limit: 10 })).toEqual({ attempt: 2, chunksJson: [], total: 0 });
    const again = await store().jobOutputAppend({ id: job.id, leaseToken: `${q.id}.a2`, nowMs: T0 + 100_001, chunksJson: '["z"]', count: 1 });
    expect([again.index, again.total]).toEqual([0, 1]);
    await act(store(), { kind: "complete", id: job.id, leaseToken: `${q.id}.a2`, nowMs: T0 + 100_002, outputJson: "1", resultTtlSeconds: 1 });
    await expectCode(store().jobOutputAppend({ id: job.id, leaseToken: `${q.id}.a2`, nowMs: T0 + 100_003, chunksJson: '["w"]', count: 1 }), "JobAlreadyFinished");
    expect(await store().jobOutputRead({ id: job.id, fromIndex: 0, limit: 10 })).toEqual({ attempt: 2, chunksJson: ['"z"'], total: 1 });
    // The chunks go with their job.
    expect((await store().jobPrune({ nowMs: T0 + 200_000, limit: 10 })).jobs).toBe(1);
    expect(await store().jobOutputRead({ id: job.id, fromIndex: 0, limit: 10 })).toBeUndefined();
  });

  test("output: indexes and reads stay right across rows of up to the most chunks a request holds", async () => {
    const q = await kit.makeQueue();
    const { job } = await kit.submit(q);
    const token = `${q.id}.big`;
    await kit.lease(q, { token, nowMs: T0, leaseSeconds: 30 });
    const max = outputLimits.maxChunks;
    const rows = [max, 3, max, 2];
    let next = 0;
    for (const count of rows) {
      const chunks = Array.from({ length: count }, (_, i) => next + i);
      const r = await store().jobOutputAppend({ id: job.id, leaseToken: token, nowMs: T0 + 1, chunksJson: JSON.stringify(chunks), count });
      expect([r.index, r.total]).toEqual([next, next + count]);
      next += count;
    }
    const read = async (fromIndex: number, limit: number): Promise<number[]> => (await store().jobOutputRead({ id: job.id, fromIndex, limit }))!.chunksJson.map(Number);
    // From inside each row, its last index included: the row that holds it is found, whatever its size.
    expect(await read(max - 1, 3)).toEqual([max - 1, max, max + 1]);
    expect(await read(max + 2, 2)).toEqual([max + 2, max + 3]);
    expect(await read(2 * max + 2, 3)).toEqual([2 * max + 2, 2 * max + 3, 2 * max + 4]);
    expect(await read(next - 1, 10)).toEqual([next - 1]);
    expect((await store().jobOutputRead({ id: job.id, fromIndex: next, limit: 10 }))!.total).toBe(next);
  });
}
