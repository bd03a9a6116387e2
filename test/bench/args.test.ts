/** bench/args.ts: the peers and pinning flags are parsed or refused with the flag's name. */
import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../../bench/args.js";
import { cpuLayoutLine } from "../../bench/report.js";

function parsed(argv: string[], cpuCount = 2) {
  const args = parseBenchArgs(argv, cpuCount);
  if (args === "help") throw new Error("unexpected help");
  return args;
}

describe("bench args", () => {
  it("takes rabbitmq as a peer for --only, and refuses an unknown one", () => {
    expect(parsed(["--only", "rabbitmq"]).only).toBe("rabbitmq");
    expect(() => parsed(["--only", "kafka"])).toThrow(/--only must be one of sluice, bullmq, pgboss, rabbitmq; got kafka/);
  });

  it("pins servers and the load generator to disjoint CPUs, and says so in the report's first line", () => {
    const args = parsed(["--pin-server-cpus", "0"]);
    expect(args.pinning).toEqual({ serverCpus: "0", loadGenCpus: "1" });
    const machine = { cpus: 2, cpuModel: "x", totalMemMiB: 1, kernel: "k", node: "v20" };
    expect(cpuLayoutLine({ machine, pinning: args.pinning })).toBe("CPUs: pinned — every server on CPU 0 (taskset), the load generator on CPU 1");
    expect(cpuLayoutLine({ machine })).toBe("CPUs: not pinned — servers and the load generator share all 2");
    expect(parsed([]).pinning).toBeUndefined();
    expect(() => parsed(["--pin-server-cpus", "0", "--pin-loadgen-cpus", "0"])).toThrow(/share CPU 0/);
  });
});
