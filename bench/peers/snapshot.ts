/**
 * A clean copy of the server source at a git revision, in a temp dir. The work tree is shared with
 * engineers editing it mid-benchmark; `--server-rev HEAD` measures committed code instead of
 * whatever half-finished edit is on disk. node_modules is symlinked, not copied.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeDir, trackDir } from "../cleanup.js";

export interface Snapshot {
  dir: string;
  commit: string;
  remove(): void;
}

export function snapshotRevision(repoRoot: string, rev: string): Snapshot {
  const commit = execFileSync("git", ["rev-parse", "--short", `${rev}^{commit}`], { cwd: repoRoot, encoding: "utf8" }).trim();
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-src-"));
  trackDir(dir);
  try {
    const tar = execFileSync("git", ["archive", "--format=tar", commit, "src", "scripts", "package.json", "tsconfig.json", "tsconfig.build.json"], { cwd: repoRoot, maxBuffer: 256 * 2 ** 20 });
    execFileSync("tar", ["-x", "-C", dir], { input: tar });
    symlinkSync(join(repoRoot, "node_modules"), join(dir, "node_modules"), "dir");
  } catch (err) {
    removeDir(dir);
    throw err;
  }
  return { dir, commit, remove: () => removeDir(dir) };
}
