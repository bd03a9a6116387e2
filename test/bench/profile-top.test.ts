/** bench/profile-top.ts: the compiled server's code counts as the project's, and --skip leaves out the start. */
import { describe, expect, it } from "vitest";
import { summarise } from "../../bench/profile-top.js";

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

/** A server's life in 100 ms samples: 0.3 s starting (loading modules), then 0.2 s flushing, then 0.1 s idle. */
const profile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2, 3, 5] },
    { id: 2, callFrame: frame("loadModules", "node:internal/modules/cjs/loader") },
    { id: 3, callFrame: frame("flush", "file:///srv/sluice/dist/stores/sqlite/group-commit.js"), children: [4] },
    { id: 4, callFrame: frame("commit", "file:///srv/sluice/node_modules/better-sqlite3/lib/methods/wrappers.js") },
    { id: 5, callFrame: frame("(idle)", "") },
  ],
  samples: [2, 2, 2, 3, 4, 5],
  timeDeltas: [100_000, 100_000, 100_000, 100_000, 100_000, 100_000],
  startTime: 0,
  endTime: 600_000,
};

function section(text: string, title: string): string[] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith(title));
  const end = lines.findIndex((l, i) => i > start && l === "");
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

describe("profile-top", () => {
  it("counts dist/ as the project's code: its package, and its functions' inclusive time", () => {
    const text = summarise(profile, 10);
    expect(section(text, "self time by package")).toEqual(expect.arrayContaining([expect.stringMatching(/ 20\.0%\s+100 ms  dist\/stores$/)]));
    expect(section(text, "inclusive time")).toEqual([expect.stringMatching(/ 40\.0%\s+200 ms  flush  dist\/stores\/sqlite\/group-commit\.js:1$/)]);
  });

  it("leaves out the first seconds with skip: the start's samples and its wall time", () => {
    const text = summarise(profile, 10, 0.3);
    expect(text).toMatch(/^profile: 0\.3 s wall, 0\.2 s busy/);
    expect(text).not.toContain("loadModules");
    expect(section(text, "inclusive time")).toEqual([expect.stringMatching(/100\.0%\s+200 ms  flush/)]);
  });
});
