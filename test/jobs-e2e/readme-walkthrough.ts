/**
 * An example README's walkthrough, read from the page so a test can replay it as written: one
 * section's fenced blocks, its ```sh command lines as words, and `node` run from the repo root
 * with the SDK's source (as the CLI's worker gets it), the way the page's commands run.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../support/cli.js";

export interface Walkthrough {
  /** The section's fenced blocks of one language (```sh, ```text), in page order. */
  blocks(lang: string): string[];
  /** Each command line of the section's ```sh blocks, as words (the pages quote with "…" only). */
  commands(): string[][];
}

/** The part of `readme` (a path under the repo) from the heading `from` up to the heading `to` (or the end). */
export function walkthrough(readme: string, from: string, to?: string): Walkthrough {
  const page = readFileSync(join(repoRoot, readme), "utf8");
  const start = page.indexOf(from);
  if (start < 0) throw new Error(`${readme} has no ${from}`);
  const section = page.slice(start, to === undefined ? undefined : page.indexOf(to, start));
  const blocks = (lang: string): string[] => [...section.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);
  return {
    blocks,
    commands: () =>
      blocks("sh")
        .flatMap((b) => b.split("\n"))
        .filter((l) => l.trim() && !l.trim().startsWith("#"))
        .map((l) => [...l.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!)),
  };
}

/** `node <args>` from the repo root (the page's `node`, with the SDK's source through tsx); killed after 60 s. */
export function runNode(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--conditions=sluice-source", "--import", "tsx", ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) => child.once("exit", (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))));
}
