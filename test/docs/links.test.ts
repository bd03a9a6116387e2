/**
 * The docs point only at what ships: every relative link in a tracked Markdown file, and every
 * repository path a doc names in backticks, is a file or folder of this repository; no doc or
 * comment names a design document or reference folder kept elsewhere.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";

const docs = execFileSync("git", ["ls-files", "*.md"], { cwd: repoRoot, encoding: "utf8" }).split("\n").filter(Boolean);
/** The repository's own top-level folders: a backticked path starting with one of them names a file here. */
const ownFolders = ["src", "test", "docs", "client", "clients", "examples", "scripts", "bench", ".ci"];

function missingTargets(doc: string): string[] {
  const text = readFileSync(join(repoRoot, doc), "utf8");
  const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^(https?:|mailto:|#)/.test(l));
  const linked = links.map((l) => normalize(join(dirname(doc), decodeURIComponent(l.split("#")[0]!))));
  const named = [...text.matchAll(/`((?:\.\.\/)*([\w.-]+)\/[\w./-]*\w)`/g)]
    .filter((m) => ownFolders.includes(m[2]!) || m[1]!.startsWith("../"))
    .map((m) => (m[1]!.startsWith("../") ? normalize(join(dirname(doc), m[1]!)) : m[1]!));
  return [...linked, ...named].filter((path) => !existsSync(join(repoRoot, path))).map((path) => `${doc} → ${path}`);
}

describe("documentation links", () => {
  it("every Markdown file links and names only files that ship", () => {
    expect(docs.length).toBeGreaterThan(10);
    expect(docs.flatMap(missingTargets)).toEqual([]);
  });

  it("no doc or comment sends the reader to a design document or reference folder outside the repository", () => {
    const sources = execFileSync("git", ["ls-files", "*.md", "*.ts", "*.js", "*.cjs", "*.py", "*.sh"], { cwd: repoRoot, encoding: "utf8" }).split("\n").filter(Boolean);
    const outside = sources.filter((file) => file !== "test/docs/links.test.ts" && /DESIGN\.md|shared\/reference|shared folder/.test(readFileSync(join(repoRoot, file), "utf8")));
    expect(outside).toEqual([]);
  });
});

describe("documentation screenshots", () => {
  it("every dashboard picture the docs show is one the dashboard test takes (npm run docs:screenshots remakes them)", async () => {
    const { docsScreenshots } = await import("../dashboard/docs-screenshots.js");
    const shown = new Set(docs.flatMap((doc) => {
      const text = readFileSync(join(repoRoot, doc), "utf8");
      return [...text.matchAll(/!\[[^\]]*\]\(([^)\s]+\.png)\)/g)].map((m) => normalize(join(dirname(doc), m[1]!)));
    }));
    const dashboardTest = readFileSync(join(repoRoot, "test/dashboard/dashboard.test.ts"), "utf8");
    const taken = new Set([...dashboardTest.matchAll(/screenshot\(page, "([\w-]+)"\)/g)].map((m) => docsScreenshots[m[1]!]).filter((p): p is string => p !== undefined));
    expect([...shown].filter((p) => p.startsWith("docs/dashboard-")).sort()).toEqual([...taken].sort());
  });
});
