import { describe, expect, it } from "vitest";
import { FairRounds, roundRobin } from "../../src/core/fair-rounds.js";
import { TenantBuckets } from "../../src/core/lease-limits.js";

/** Serves rounds over `ready` (each flow's rows, first first), as a store would: answers the rows started, in order. */
function serve(ready: Record<string, string[]>, wanted: number, refused: ReadonlySet<string> = new Set()): { started: string[]; rounds: FairRounds; rereads: number } {
  const left = Object.fromEntries(Object.entries(ready).map(([f, rows]) => [f, [...rows]]));
  let rereads = 0;
  const rounds = new FairRounds(wanted, () => {
    rereads++;
    return Object.keys(ready);
  });
  const started: string[] = [];
  for (let flow = rounds.next(); flow !== undefined; flow = rounds.next()) {
    for (let row = left[flow]!.shift(); row !== undefined; row = left[flow]!.shift()) {
      if (refused.has(row)) continue; // dead-lettered: the flow's next row is tried
      started.push(row);
      rounds.served(flow);
      break;
    }
  }
  return { started, rounds, rereads };
}

describe("fair rounds", () => {
  it("serves one per flow per round, in the flows' order, until enough started", () => {
    const { started, rounds } = serve({ a: ["a1", "a2", "a3", "a4"], b: ["b1"], c: ["c1", "c2"] }, 6);
    expect(started).toEqual(["a1", "b1", "c1", "a2", "c2", "a3"]);
    expect([...rounds.servedBy]).toEqual([
      ["a", 3],
      ["b", 1],
      ["c", 2],
    ]);
  });

  it("ends after a round that started none, and asks for the flows once per round", () => {
    const { started, rereads } = serve({ a: ["a1"], b: ["b1", "b2"] }, 10);
    expect(started).toEqual(["a1", "b1", "b2"]);
    expect(rereads).toBe(3);
    expect(serve({}, 5).started).toEqual([]);
    expect(serve({ a: ["a1"] }, 0).started).toEqual([]);
  });

  it("tries a flow's next row when one did not start (dead-lettered), in the same round", () => {
    expect(serve({ a: ["a1", "a2"], b: ["b1"] }, 2, new Set(["a1"])).started).toEqual(["a2", "b1"]);
  });

  it("roundRobin picks what the rounds would from rows already read", () => {
    expect(roundRobin([["a1", "a2", "a3"], ["b1"], ["c1", "c2"]], 5)).toEqual(["a1", "b1", "c1", "a2", "c2"]);
    expect(roundRobin([["a1"], []], 5)).toEqual(["a1"]);
    expect(roundRobin<string>([], 3)).toEqual([]);
  });
});

describe("tenant rates over ready flows", () => {
  it("admits tenants with a whole token (room cut to their tokens), holds back the others, never the ungrouped flow", () => {
    const t0 = 1_000_000;
    const stored = new Map([
      ["empty", { tokens: 0.5, atMs: t0 }],
      ["two", { tokens: 2.5, atMs: t0 }],
    ]);
    const buckets = new TenantBuckets(1, t0, (t) => stored.get(t));
    // Capacity is one second's worth: "two" refills to at most 1.
    const out = buckets.admit([{ flow: "empty" }, { flow: "", room: 7 }, { flow: "two", room: 5 }, { flow: "new" }]);
    expect(out.admitted).toEqual([{ flow: "", room: 7 }, { flow: "two", room: 1 }, { flow: "new", room: 1 }]);
    expect(out.heldBack).toEqual(["empty"]);
    expect(buckets.retryAtMs).toBe(t0 + 500);
    buckets.spend("two", 1);
    expect(buckets.spent()).toEqual([["two", { tokens: 0, atMs: t0 }]]);
  });

  it("reads each tenant's stored bucket once when a store hands them in together", () => {
    const t0 = 5_000_000;
    const buckets = new TenantBuckets(2, t0);
    expect(buckets.unread(["a", "b"])).toEqual(["a", "b"]);
    buckets.read(["a", "b"], [{ tenant: "a", tokens: 0, atMs: t0 }]);
    expect(buckets.unread(["a", "b", "c"])).toEqual(["c"]);
    // "a" has no whole token; "b" had no bucket: a full one.
    expect(buckets.admit([{ flow: "a" }, { flow: "b" }]).admitted).toEqual([{ flow: "b", room: 2 }]);
    expect(buckets.retryAtMs).toBe(t0 + 500);
  });
});
