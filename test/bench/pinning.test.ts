/** bench/pinning.ts: the --pin-*-cpus flags give disjoint, existing CPU sets or a clear error. */
import { describe, expect, it } from "vitest";
import { parseCpuList, pinningFrom, serverCommand, setPinning } from "../../bench/pinning.js";

describe("bench pinning flags", () => {
  it("parses single CPUs, ranges and lists", () => {
    expect(parseCpuList("pin-server-cpus", "0", 4)).toEqual([0]);
    expect(parseCpuList("pin-server-cpus", "1-3", 4)).toEqual([1, 2, 3]);
    expect(parseCpuList("pin-server-cpus", "3,0-1", 4)).toEqual([0, 1, 3]);
  });

  it("refuses what is not a CPU list, a backwards range and a CPU the machine lacks", () => {
    expect(() => parseCpuList("pin-server-cpus", "a", 2)).toThrow(/--pin-server-cpus must be a CPU list/);
    expect(() => parseCpuList("pin-server-cpus", "", 2)).toThrow(/CPU list/);
    expect(() => parseCpuList("pin-server-cpus", "1-0", 2)).toThrow(/runs backwards/);
    expect(() => parseCpuList("pin-loadgen-cpus", "2", 2)).toThrow(/--pin-loadgen-cpus: CPU 2 does not exist \(this machine has CPUs 0-1\)/);
  });

  it("gives the load generator every other CPU unless told, and never a shared or empty set", () => {
    expect(pinningFrom(undefined, undefined, 2)).toBeUndefined();
    expect(pinningFrom("0", undefined, 2)).toEqual({ serverCpus: "0", loadGenCpus: "1" });
    expect(pinningFrom("1", "0", 4)).toEqual({ serverCpus: "1", loadGenCpus: "0" });
    expect(() => pinningFrom("0-1", undefined, 2)).toThrow(/leaves no CPU for the load generator/);
    expect(() => pinningFrom("0-1", "1-2", 4)).toThrow(/share CPU 1/);
    expect(() => pinningFrom(undefined, "1", 2)).toThrow(/needs --pin-server-cpus/);
  });

  it("starts servers under taskset only while pinning is on", () => {
    setPinning({ serverCpus: "0", loadGenCpus: "1" });
    expect(serverCommand("redis-server", ["--port", "1"])).toEqual(["taskset", ["-c", "0", "redis-server", "--port", "1"]]);
    setPinning(undefined);
    expect(serverCommand("redis-server", ["--port", "1"])).toEqual(["redis-server", ["--port", "1"]]);
  });
});
