/**
 * SDK snippets from the READMEs, run as written: as an ES module from the repo root, their URL
 * swapped for a test server's, and their `console.log(…); // <output>` comment as the expected output.
 */
import { spawn } from "node:child_process";
import { expect } from "vitest";
import { repoRoot } from "../support/cli.js";

/**
 * Runs the snippet as an ES module from the repo root (where `@sluice/client` resolves, to its
 * TypeScript source through tsx, as the worker does), against `baseUrl` instead of the README's.
 */
export async function runSdkSnippet(snippet: string, readmeUrl: string, baseUrl: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  expect(snippet).toContain(readmeUrl);
  const source = snippet.replaceAll(readmeUrl, baseUrl);
  const child = spawn(process.execPath, ["--conditions=sluice-source", "--import", "tsx", "--input-type=module", "--eval", source], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 40_000);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export const oneLine = (text: string): string => text.trim().replace(/\s+/g, " ");

/** The `console.log(…); // <output>` comment as a pattern: the output on one line, `…` standing for anything. */
export function expectedOutputPattern(snippet: string): RegExp {
  const comment = /console\.log\(.*\); \/\/ (.+)$/m.exec(snippet)?.[1];
  if (comment === undefined) throw new Error("the SDK snippet has no `console.log(…); // output` line");
  const escaped = comment.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${escaped.join(".+?")}$`);
}
