/**
 * docs/sdk-wire-spec.md is the one statement of both SDKs' wire semantics: every rule it names
 * (`**\`<id>\`** — …`) is checked by at least one TypeScript test (a `// wire: <id>` comment right
 * above its `it(`) and at least one Python test (`@pytest.mark.spec("<id>")` on it), and no test
 * names a rule the page doesn't have.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";

function filesUnder(dir: string, pattern: RegExp): string[] {
  return readdirSync(join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && pattern.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Rule id → where it is tested, from tags that stand right before a test. */
function tagged(files: string[], tag: RegExp, testStart: RegExp): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of files) {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      const m = tag.exec(line);
      if (!m) return;
      const next = lines.slice(i + 1).find((l) => !tag.test(l) && !/^\s*@/.test(l));
      expect(next, `${relative(repoRoot, file)}:${i + 1}: the tag must stand right before a test`).toMatch(testStart);
      found.set(m[1]!, [...(found.get(m[1]!) ?? []), `${relative(repoRoot, file)}:${i + 1}`]);
    });
  }
  return found;
}

describe("docs/sdk-wire-spec.md", () => {
  it("every rule is tested in both SDKs, and every tag names a rule", () => {
    const spec = readFileSync(join(repoRoot, "docs/sdk-wire-spec.md"), "utf8");
    const rules = [...spec.matchAll(/^\*\*`([a-z0-9-]+)`\*\* — /gm)].map((m) => m[1]!);
    expect(rules.length).toBeGreaterThanOrEqual(15);
    const ts = tagged([...filesUnder("test", /\.test\.ts$/), ...filesUnder("client/src", /\.test\.ts$/)], /^\s*\/\/ wire: ([a-z0-9-]+)\s*$/, /^\s*it\(/);
    const py = tagged(filesUnder("clients/python/tests", /^test_.*\.py$/), /^\s*@pytest\.mark\.spec\("([a-z0-9-]+)"\)\s*$/, /^\s*(async )?def test_/);
    for (const [sdk, found] of [["TypeScript", ts], ["Python", py]] as const) {
      expect(rules.filter((r) => !found.has(r)), `rules with no ${sdk} test`).toEqual([]);
      expect([...found.keys()].filter((t) => !rules.includes(t)), `${sdk} tags naming no rule`).toEqual([]);
    }
  });
});
