/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --only sluice --cpu-prof DIR`): self time by
 * function, by file and by package, and inclusive time (self + callees) of the project's own
 * functions, so the server's hot spots and fat subtrees read at a glance without DevTools.
 * Usage: npx tsx bench/profile-top.ts FILE.cpuprofile [--top N] [--skip SECONDS]
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** The project's own code: src/ when the server runs through tsx, dist/ when compiled (the bench's default). */
const projectDir = /\/(src|dist|client)\//;

function shortFile(url: string): string {
  if (url === "") return "(native/VM)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) return url.slice(nm + "node_modules/".length);
  const own = projectDir.exec(url);
  if (own) return url.slice(own.index + 1);
  return url.replace(/^file:\/\//, "");
}

function packageOf(url: string): string {
  if (url === "") return "(native/VM: GC, idle, builtins)";
  if (url.startsWith("node:")) return "node core";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return (rest[0] ?? "").startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] ?? "?");
  }
  const own = projectDir.exec(url);
  if (own) return url.slice(own.index + 1).split("/").slice(0, 2).join("/");
  return "other";
}

/** `skipS`: leave out the profile's first seconds (the server's start: loading modules, migrations). */
export function summarise(profile: CpuProfile, top: number, skipS = 0): string {
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) byId.set(n.id, n);
  const selfUsByNode = new Map<number, number>();
  const skipUs = skipS * 1e6;
  let atUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    atUs += profile.timeDeltas[i] ?? 0;
    if (atUs <= skipUs) continue;
    const id = profile.samples[i] ?? -1;
    selfUsByNode.set(id, (selfUsByNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const totalUs = profile.endTime - profile.startTime - Math.min(skipUs, atUs);
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  const byPkg = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfUsByNode) {
    const cf = byId.get(id)?.callFrame;
    if (cf === undefined) continue;
    if (cf.functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    const fn = `${cf.functionName || "(anonymous)"}  ${shortFile(cf.url)}${cf.url === "" ? "" : `:${cf.lineNumber + 1}`}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    byFile.set(shortFile(cf.url), (byFile.get(shortFile(cf.url)) ?? 0) + us);
    byPkg.set(packageOf(cf.url), (byPkg.get(packageOf(cf.url)) ?? 0) + us);
  }
  const busyUs = totalUs - idleUs;
  const inclusive = inclusiveProjectTime(profile, byId, selfUsByNode);
  const table = (title: string, m: Map<string, number>): string => {
    const rows = [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    return [title, ...rows.map(([k, us]) => `${((us / busyUs) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`)].join("\n");
  };
  return [
    `profile: ${(totalUs / 1e6).toFixed(1)} s wall, ${(busyUs / 1e6).toFixed(1)} s busy (${((busyUs / totalUs) * 100).toFixed(0)}% of the main thread), ${(idleUs / 1e6).toFixed(1)} s idle; percentages are of busy time`,
    "",
    table("self time by package/area:", byPkg),
    "",
    table("self time by file:", byFile),
    "",
    table("self time by function:", byFn),
    "",
    table("inclusive time (self + callees) of the project's functions:", inclusive),
  ].join("\n");
}

/** Time of every sample under each function of the project (src/ or dist/, client/), counted once per sample. */
function inclusiveProjectTime(profile: CpuProfile, byId: Map<number, ProfileNode>, selfUsByNode: Map<number, number>): Map<string, number> {
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const result = new Map<string, number>();
  for (const [id, us] of selfUsByNode) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const cf = byId.get(at)?.callFrame;
      if (cf === undefined || !projectDir.test(cf.url) || cf.url.includes("node_modules")) continue;
      const key = `${cf.functionName || "(anonymous)"}  ${shortFile(cf.url)}:${cf.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      result.set(key, (result.get(key) ?? 0) + us);
    }
  }
  return result;
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].split("/").pop() ?? "");
if (isMain) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: "string" }, skip: { type: "string" } } });
  const file = positionals[0];
  if (file === undefined) {
    console.error("usage: npx tsx bench/profile-top.ts FILE.cpuprofile [--top N] [--skip SECONDS]");
    process.exit(2);
  }
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  console.log(summarise(profile, Number(values.top ?? 25), Number(values.skip ?? 0)));
}
