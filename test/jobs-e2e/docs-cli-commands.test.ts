/**
 * Every `sluice <command> [<subcommand>]` the user docs name (README.md, docs/, client/ and
 * examples/ READMEs, as `sluice …`, `npx sluice …` or `node dist/cli/main.js …` in code) is a
 * command the CLI has: a reader who copies one must not get "unknown command".
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../support/cli.js";
import { runCli } from "./workers.js";

function markdownFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md") && !e.parentPath.includes("node_modules"))
    .map((e) => join(e.parentPath, e.name));
}

/** The code in a Markdown file: fenced blocks and inline code spans. */
function codeOf(markdown: string): string[] {
  const fenced = [...markdown.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const inline = [...markdown.replace(/```[\s\S]*?```/g, "").matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  return [...fenced, ...inline];
}

/** [file, words after the CLI's name] for every CLI invocation in the docs' code. */
function documentedInvocations(): [string, string[]][] {
  const files = [join(repoRoot, "README.md"), join(repoRoot, "client/README.md"), ...markdownFiles("docs"), ...markdownFiles("examples")];
  const found: [string, string[]][] = [];
  for (const file of files) {
    for (const code of codeOf(readFileSync(file, "utf8"))) {
      for (const m of code.matchAll(/(?:^|[\s(])(?:sluice|dist\/cli\/main\.js)((?: [a-z][\w-]*(?=\s|$))+)/gm)) {
        found.push([file.slice(repoRoot.length + 1), m[1]!.trim().split(" ")]);
      }
    }
  }
  return found;
}

/** The command names in a commander help text's "Commands:" section. */
function commandsIn(help: string): Set<string> {
  const section = help.split("\nCommands:\n")[1] ?? "";
  return new Set([...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]!));
}

describe("the CLI commands the docs name", () => {
  it("all exist", async () => {
    const invocations = documentedInvocations();
    // The walkthroughs name at least serve, worker and jobs submit: the scan must see them.
    expect(invocations.map(([, words]) => words[0])).toEqual(expect.arrayContaining(["serve", "worker", "jobs"]));
    const top = commandsIn((await runCli(["--help"])).stdout);
    // Each command's help once, all at a time: a CLI start each, not one after another.
    const commands = [...new Set(invocations.map(([, [command]]) => command!))].filter((command) => top.has(command));
    const helps = await Promise.all(commands.map(async (command) => [command, commandsIn((await runCli([command, "--help"])).stdout)] as const));
    const subcommands = new Map(helps);
    const missing: string[] = [];
    for (const [file, [command, sub]] of invocations) {
      const subs = subcommands.get(command!);
      if (subs === undefined) missing.push(`${file}: sluice ${command}`);
      else if (subs.size > 0 && sub !== undefined && !subs.has(sub)) missing.push(`${file}: sluice ${command} ${sub}`);
    }
    expect(missing).toEqual([]);
  });
});
