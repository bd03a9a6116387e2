/** bench/time-split.ts: samples go to the area their stack names, inside the measured window only. */
import { describe, expect, it } from "vitest";
import { type CpuProfile, frameArea, splitProfile, stackArea, timeSplitLines } from "../../bench/time-split.js";

const f = (functionName: string, url: string) => ({ functionName, url });
const dist = "file:///srv/sluice/dist";
const nm = "file:///srv/sluice/node_modules";

/**
 * A server's event loop in 1 ms samples: HTTP parsing, an SQS decode calling JSON.parse (native),
 * a core call into node:crypto, a store write into better-sqlite3's native run(), the WAL fsync,
 * a metrics update, GC, idle — and one sample before the window.
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: f("(root)", ""), children: [2, 3, 5, 7, 10, 12, 13, 14, 15] },
    { id: 2, callFrame: f("parserOnHeadersComplete", "node:_http_common") },
    { id: 3, callFrame: f("decodeJson", `${dist}/protocols/sqs/json-codec.js`), children: [4] },
    { id: 4, callFrame: f("parse", "") },
    { id: 5, callFrame: f("receive", `${dist}/core/queue-service.js`), children: [6] },
    { id: 6, callFrame: f("createHmac", "node:internal/crypto/hash") },
    { id: 7, callFrame: f("flush", `${dist}/stores/sqlite/group-commit.js`), children: [8] },
    { id: 8, callFrame: f("run", `${nm}/better-sqlite3/lib/methods/wrappers.js`), children: [9] },
    { id: 9, callFrame: f("run", "") },
    { id: 10, callFrame: f("syncNow", `${dist}/stores/sqlite/wal-syncer.js`), children: [11] },
    { id: 11, callFrame: f("fdatasyncSync", "node:fs") },
    { id: 12, callFrame: f("inc", `${nm}/prom-client/lib/counter.js`) },
    { id: 13, callFrame: f("(garbage collector)", "") },
    { id: 14, callFrame: f("(idle)", "") },
    { id: 15, callFrame: f("(program)", "") },
  ],
  samples: [2, 2, 4, 6, 9, 9, 9, 11, 11, 12, 13, 14, 14, 15],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  startTime: 10_000,
  endTime: 24_000,
};

describe("time split", () => {
  it("names areas by project directory, package and Node's HTTP modules; other internals are transparent", () => {
    expect(frameArea(f("onSend", `${nm}/fastify/lib/reply.js`))).toBe("HTTP (fastify, node http)");
    expect(frameArea(f("validate", `${nm}/@fastify/ajv-compiler/index.js`))).toBe("HTTP (fastify, node http)");
    expect(frameArea(f("write", `${nm}/pino/lib/proto.js`))).toBe("metrics/logging");
    expect(frameArea(f("observe", `${dist}/server/metrics/request-metrics.js`))).toBe("metrics/logging");
    expect(frameArea(f("buildApp", `${dist}/server/app.js`))).toBe("other");
    expect(frameArea(f("verify", "file:///srv/sluice/src/protocols/auth/sigv4.ts"))).toBe("protocol decode/encode");
    expect(frameArea(f("writeGeneric", "node:internal/stream_base_commons"))).toBe("HTTP (fastify, node http)");
    expect(frameArea(f("createHmac", "node:internal/crypto/hash"))).toBeUndefined();
    expect(frameArea(f("parse", ""))).toBeUndefined();
    expect(stackArea([f("(program)", "")])).toBe("other");
  });

  it("adds up self time per area within the window, as µs per message", () => {
    // The first sample (at 11,000 µs) falls before the window.
    const split = splitProfile(profile, 2, { startUs: 11_500, endUs: 24_000 });
    expect(split.busyUs).toEqual({
      "HTTP (fastify, node http)": 1000,
      "protocol decode/encode": 1000,
      core: 1000,
      "store (SQLite)": 3000,
      "fsync wait": 2000,
      "metrics/logging": 1000,
      GC: 1000,
      other: 1000,
    });
    expect(split.idleUs).toBe(2000);
    const lines = Object.fromEntries(timeSplitLines({ ...split, mainThreadCpuUs: 6000 }));
    expect(lines["store (SQLite)"]).toBe("1500.0   27%");
    expect(lines["event loop busy, in all"]?.trim()).toBe("5500.0");
    expect(lines["  of which on a CPU (/proc)"]?.trim()).toBe("3000.0");
    expect(lines["event loop idle"]).toBe("15% of the phase");
  });

  it("takes every sample without a window", () => {
    expect(splitProfile(profile, 1).busyUs["HTTP (fastify, node http)"]).toBe(2000);
  });
});
