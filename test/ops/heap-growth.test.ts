/**
 * The server bounds how far V8's old generation grows past its live set (src/cli/heap-growth.ts):
 * garbage promoted by requests in flight is collected near 1.5× the live heap, not near 4×.
 * Each case is a child process (the bound is process-wide) with a 16 MiB live set that promotes
 * 128 MiB of garbage; the old generation's largest size is compared with the live set.
 */
import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { boundHeapGrowth } from "../../src/cli/heap-growth.js";
import { repoRoot } from "../support/cli.js";

const liveBytes = 16 * 1024 * 1024;

/** The fixture's largest old generation, in multiples of its live set. */
async function largestOldOverLive(mode: "bound" | "free", nodeFlags: string[] = []): Promise<number> {
  // A heap limit of 4 GiB: V8 then allows its largest growth whatever the machine's memory.
  const args = ["--max-semi-space-size=1", "--max-old-space-size=4096", ...nodeFlags, "--import", "tsx", "test/ops/fixtures/promoted-garbage.ts", mode];
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  expect(code, out).toBe(0);
  return (JSON.parse(out) as { largest: number }).largest / liveBytes;
}

it("collects promoted garbage before the old generation reaches 2.25× the live set", async () => {
  expect(await largestOldOverLive("bound")).toBeLessThan(2.25);
}, 60_000);

it("without the bound, the same garbage takes the old generation past 3× the live set", async () => {
  expect(await largestOldOverLive("free")).toBeGreaterThan(3);
}, 60_000);

it("leaves a --heap-growing-percent given to node alone", async () => {
  expect(boundHeapGrowth(["--max-semi-space-size=32", "--heap-growing-percent=400"])).toBe(false);
  expect(boundHeapGrowth(["--heap_growing_percent", "400"])).toBe(false);
  expect(await largestOldOverLive("bound", ["--heap-growing-percent=400"])).toBeGreaterThan(3);
}, 60_000);
