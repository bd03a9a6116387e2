/**
 * "Where the time goes" (`npm run bench -- --time-split`): the Sluice server's event-loop time
 * during the saturated phase, from its V8 CPU profile, in µs per message by area of the code. The
 * samples count wall time: a blocking fsync counts, and so does time the thread waited for a core.
 * Each sample goes to the nearest frame on its stack that names an area (a project directory, a
 * known package, Node's HTTP stack); Node's other internals and native code inherit their caller's.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

export const areas = ["HTTP (fastify, node http)", "protocol decode/encode", "core", "store (SQLite)", "fsync wait", "metrics/logging", "GC", "other"] as const;
export type Area = (typeof areas)[number];

export interface CallFrame {
  functionName: string;
  url: string;
}
export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  /** µs on the machine's monotonic clock (process.hrtime's). */
  startTime: number;
  endTime: number;
}

/** A span of the monotonic clock in µs: `process.hrtime.bigint() / 1000n` at its ends. */
export interface ClockWindow {
  startUs: number;
  endUs: number;
}

export interface TimeSplit {
  /** Main-thread self time in the window by area, µs. */
  busyUs: Record<Area, number>;
  idleUs: number;
  messages: number;
  /** The main thread's CPU in the window, from /proc: samples count wall time, this only running time. */
  mainThreadCpuUs?: number;
}

const httpPackages = new Set(["fastify", "find-my-way", "light-my-request", "avvio", "fast-json-stringify", "fast-querystring", "secure-json-parse", "toad-cache", "rfdc", "fast-uri", "process-warning", "abstract-logging"]);
const protocolPackages = new Set(["ajv", "ajv-formats", "fast-deep-equal", "json-schema-traverse", "fast-xml-parser"]);
const storePackages = new Set(["better-sqlite3", "pg", "pg-protocol", "pg-pool"]);
const observabilityPackages = new Set(["prom-client", "pino", "sonic-boom", "thread-stream", "pino-std-serializers", "fast-redact", "quick-format-unescaped", "tdigest", "bintrees"]);
const httpNodeModules = /^node:(_http_|http$|net$|stream$|internal\/streams\/|internal\/stream_base_commons|internal\/http)/;
const projectDir = /\/(src|dist)\/([^/]+)\/(.*)$/;
const fsyncFunction = /^f(data)?sync(Sync)?$/;

function packageName(url: string): string | undefined {
  const at = url.lastIndexOf("node_modules/");
  if (at === -1) return undefined;
  const [first = "", second = ""] = url.slice(at + "node_modules/".length).split("/");
  if (first === "@fastify") return "fastify";
  return first.startsWith("@") ? `${first}/${second}` : first;
}

/** The area a frame names, or undefined when it is transparent (native code, Node internals). */
export function frameArea(frame: CallFrame): Area | undefined {
  const { url } = frame;
  if (url === "") return undefined;
  const pkg = packageName(url);
  if (pkg !== undefined) {
    if (httpPackages.has(pkg)) return "HTTP (fastify, node http)";
    if (protocolPackages.has(pkg)) return "protocol decode/encode";
    if (storePackages.has(pkg)) return "store (SQLite)";
    if (observabilityPackages.has(pkg)) return "metrics/logging";
    return "other";
  }
  if (url.startsWith("node:")) return httpNodeModules.test(url) ? "HTTP (fastify, node http)" : undefined;
  const own = projectDir.exec(url);
  if (own === null) return undefined;
  const [, , dir = "", rest = ""] = own;
  if (dir === "protocols") return "protocol decode/encode";
  if (dir === "core") return "core";
  if (dir === "stores") return "store (SQLite)";
  if (dir === "server" && /^(metrics\/|telemetry|request-log|logger)/.test(rest)) return "metrics/logging";
  return "other";
}

/**
 * The area of one sample, given its stack leaf first: GC and idle by the VM's own frames, an fsync
 * anywhere on the stack as waiting for it, else the nearest frame that names an area.
 */
export function stackArea(stack: readonly CallFrame[]): Area | "idle" {
  const leaf = stack[0];
  if (leaf?.functionName === "(idle)") return "idle";
  if (leaf?.functionName === "(garbage collector)") return "GC";
  if (stack.some((f) => fsyncFunction.test(f.functionName))) return "fsync wait";
  for (const frame of stack) {
    const area = frameArea(frame);
    if (area !== undefined) return area;
  }
  return "other";
}

/** Self time by area of the samples taken inside `window` (the whole profile without one). */
export function splitProfile(profile: CpuProfile, messages: number, window?: ClockWindow): TimeSplit {
  const byId = new Map<number, ProfileNode>();
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parentOf.set(c, n.id);
  }
  const areaByNode = new Map<number, Area | "idle">();
  const areaOf = (id: number): Area | "idle" => {
    let area = areaByNode.get(id);
    if (area === undefined) {
      const stack: CallFrame[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
        const frame = byId.get(at)?.callFrame;
        if (frame !== undefined) stack.push(frame);
      }
      area = stackArea(stack);
      areaByNode.set(id, area);
    }
    return area;
  };
  const busyUs = Object.fromEntries(areas.map((a) => [a, 0])) as Record<Area, number>;
  let idleUs = 0;
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (window !== undefined && (at < window.startUs || at > window.endUs)) continue;
    const area = areaOf(profile.samples[i] ?? -1);
    if (area === "idle") idleUs += delta;
    else busyUs[area] += delta;
  }
  return { busyUs, idleUs, messages };
}

/** Now on the monotonic clock the profiles use, µs. */
export function clockNowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** The profile `node --cpu-prof` wrote for process `pid` in `dir` (its name carries the pid). */
export function profileOfPid(dir: string, pid: number): CpuProfile | undefined {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile") && f.split(".").includes(String(pid)))
    .sort((a, b) => statSync(join(dir, b)).mtimeMs - statSync(join(dir, a)).mtimeMs);
  const file = files[0];
  return file === undefined ? undefined : (JSON.parse(readFileSync(join(dir, file), "utf8")) as CpuProfile);
}

/** Rows of µs per message by area (and the main thread's busy total and idle share). */
export function timeSplitLines(split: TimeSplit): Array<[string, string]> {
  const per = (us: number): string => (us / split.messages).toFixed(1);
  const busy = areas.reduce((s, a) => s + split.busyUs[a], 0);
  // The share of busy time too: it survives a busy machine, where every area's wall time stretches alike.
  const share = (us: number): string => (busy > 0 ? `${Math.round((us / busy) * 100)}%` : "–").padStart(4);
  const rows: Array<[string, string]> = areas.map((a) => [a, `${per(split.busyUs[a])}  ${share(split.busyUs[a])}`]);
  // Padded as wide as the share column, so the µs figures line up.
  const blank = "      ";
  rows.push(["event loop busy, in all", `${per(busy)}${blank}`]);
  if (split.mainThreadCpuUs !== undefined) rows.push(["  of which on a CPU (/proc)", `${per(split.mainThreadCpuUs)}${blank}`]);
  const total = busy + split.idleUs;
  rows.push(["event loop idle", total > 0 ? `${Math.round((split.idleUs / total) * 100)}% of the phase` : "–"]);
  return rows;
}
