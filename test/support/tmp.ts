/** Temporary directories for data dirs; every one made here is removed by `removeTempDirs()`. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made = new Set<string>();

export async function makeTempDir(prefix = "sluice-test-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

export async function removeTempDir(dir: string): Promise<void> {
  made.delete(dir);
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all([...made].map((d) => removeTempDir(d)));
}
