/** Installs a peer's server from Debian's packages when the machine lacks it (the bench runs as root). */
import { runCommand } from "./procs.js";

/** `present()` says whether the server is there; if not, `apt-get install -y pkg` (after an update if needed). */
export async function ensureAptPackage(pkg: string, present: () => boolean, log: (line: string) => void): Promise<void> {
  if (present()) return;
  log(`${pkg} not found: installing it with apt-get (needs root)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  // Another install may hold dpkg's lock for a while on a shared machine: wait for it.
  const install = ["-o", "DPkg::Lock::Timeout=300", "install", "-y", pkg];
  let res = await runCommand("apt-get", install, { env });
  if (res.code !== 0) {
    // A fresh machine often has no package lists yet.
    log("apt-get install failed; running apt-get update and retrying…");
    await runCommand("apt-get", ["update"], { env });
    res = await runCommand("apt-get", install, { env });
  }
  if (res.code !== 0 || !present()) throw new Error(`could not install ${pkg}:\n${res.output.slice(-2000)}`);
}
