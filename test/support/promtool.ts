/** Runs Debian's promtool (package `prometheus`; .ci/run installs it) and returns what it said. */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

export interface PromtoolResult {
  code: number | null;
  output: string;
}

export async function promtool(args: string[], stdin?: string): Promise<PromtoolResult> {
  const path = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find((p) => existsSync(p));
  if (!path) throw new Error("promtool is missing: install Debian's prometheus package (sudo apt-get install -y prometheus)");
  const child = spawn(path, args, { stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (output += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (output += d));
  child.stdin.end(stdin ?? "");
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, output };
}
