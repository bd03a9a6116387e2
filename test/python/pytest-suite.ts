/**
 * Runs the Python SDK's pytest suite (clients/python/tests) under vitest, one vitest test per
 * pytest test, so `npm test` and CI's count include each of them. The suite is collected when the
 * test file loads (synchronously: vitest needs the names up front), run once in beforeAll with
 * Debian's /usr/bin/python3, and each vitest test asserts its own pytest outcome. A missing
 * Debian package fails with the apt-get command that installs it; nothing is skipped.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";

export const python = "/usr/bin/python3";
const sdkDir = join(repoRoot, "clients/python");
/** Debian packages the suite needs, by the module that proves each is installed. */
const debianPackages: Record<string, string> = { pytest: "python3-pytest", sklearn: "python3-sklearn", build: "python3-build", setuptools: "python3-setuptools", wheel: "python3-wheel", venv: "python3-venv", pip: "python3-pip" };

export function pythonEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1", ...extra };
}

/** The Debian packages missing on this machine, as the apt-get command that installs them. */
export function missingPackages(): string | undefined {
  if (!existsSync(python)) return "apt-get install -y python3 " + Object.values(debianPackages).join(" ");
  const probe = spawnSync(python, ["-c", `import importlib.util, sys; print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))`, ...Object.keys(debianPackages)], { encoding: "utf8" });
  const missing = probe.stdout.trim().split(/\s+/).filter(Boolean).map((m) => debianPackages[m]!);
  return missing.length > 0 ? `apt-get install -y ${missing.join(" ")}` : undefined;
}

/** The node ids of the pytest tests in `files` (paths under clients/python), collected now. */
export function collectPytest(files: string[]): string[] {
  const out = spawnSync(python, ["-m", "pytest", "--collect-only", "-q", ...files], { cwd: sdkDir, env: pythonEnv(), encoding: "utf8", timeout: 60_000 });
  const ids = out.stdout.split("\n").filter((line) => line.includes("::"));
  if (out.status !== 0 || ids.length === 0) throw new Error(`pytest could not collect ${files.join(" ")} (exit ${out.status}):\n${out.stdout}\n${out.stderr}`);
  return ids;
}

export interface PytestOutcome {
  outcome: string;
  text: string;
}

/** Runs pytest on `files`; resolves with each test's outcome and pytest's whole output. */
export async function runPytest(files: string[]): Promise<{ outcomes: Map<string, PytestOutcome[]>; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-pytest-"));
  const report = join(dir, "report.jsonl");
  try {
    const child = spawn(python, ["-m", "pytest", "-q", "-rfE", ...files], { cwd: sdkDir, env: pythonEnv({ SLUICE_PYTEST_REPORT: report }), stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
    await new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const outcomes = new Map<string, PytestOutcome[]>();
    const lines = existsSync(report) ? readFileSync(report, "utf8").split("\n").filter(Boolean) : [];
    for (const line of lines) {
      const { nodeid, outcome, text } = JSON.parse(line) as { nodeid: string; outcome: string; text: string };
      outcomes.set(nodeid, [...(outcomes.get(nodeid) ?? []), { outcome, text }]);
    }
    return { outcomes, output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Passes when the test ran and passed, its setup and teardown included; else fails with pytest's account. */
export function expectPassed(id: string, outcomes: PytestOutcome[] | undefined, output: string): void {
  if (!outcomes) throw new Error(`pytest reported nothing for ${id}; its output:\n${output.slice(-4000)}`);
  const bad = outcomes.filter((o) => o.outcome !== "passed");
  if (bad.length > 0) throw new Error(`${id}: ${bad.map((o) => `${o.outcome}\n${o.text}`).join("\n")}`);
  expect(outcomes.map((o) => o.outcome)).toContain("passed");
}

/**
 * A vitest suite for the pytest tests in `files`: a first test that the Debian packages are
 * there (failing with the apt-get command when not), then one test per collected pytest test.
 */
export function pytestSuite(title: string, files: string[]): void {
  const missing = missingPackages();
  describe(title, () => {
    it("has the Debian packages it needs", () => {
      if (missing) throw new Error(`missing Debian packages: ${missing}`);
    });
    if (missing) return;
    const ids = collectPytest(files);
    let result: { outcomes: Map<string, PytestOutcome[]>; output: string };
    beforeAll(async () => {
      result = await runPytest(files);
    }, 600_000);
    for (const id of ids) it(id, () => expectPassed(id, result.outcomes.get(id), result.output));
  });
}
