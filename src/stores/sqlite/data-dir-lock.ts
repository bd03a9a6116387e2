/**
 * One server per SQLite data dir: a server holds an exclusive lock on `sluice.lock` in the dir for
 * as long as it runs. The lock is SQLite's own file lock (a POSIX advisory lock), so the operating
 * system drops it when the process dies, kill -9 included: no stale lock to clean up by hand. A
 * second server, in another process or in this one, is refused at once.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";

export const dataDirLockFileName = "sluice.lock";
/** Who holds the lock, for the refusal's message: the lock file itself can't be read while held. */
const holderFileName = "sluice.lock.pid";

/** Another server holds the data dir: the message says which and what to do. */
export class DataDirInUseError extends Error {
  override readonly name = "DataDirInUseError";
}

export interface DataDirLock {
  /** Lets the next server take the dir. Idempotent. */
  release(): void;
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
}

function holderPid(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, holderFileName), "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes `dir` for this process, or throws DataDirInUseError at once (it never waits). */
export function lockDataDir(dir: string): DataDirLock {
  const db = new Database(join(dir, dataDirLockFileName), { timeout: 0 });
  try {
    // An open exclusive transaction that never commits: the lock lasts as long as the connection.
    db.exec("BEGIN EXCLUSIVE");
  } catch (err) {
    db.close();
    if (!isBusy(err)) throw err;
    const pid = holderPid(dir);
    throw new DataDirInUseError(
      `--data-dir ${resolve(dir)} is in use by another Sluice server${pid === undefined ? "" : ` (pid ${pid})`}: ` +
        "one server per SQLite data dir. Stop that server first, or give this one another --data-dir " +
        "(several servers share one database only with --store postgres).",
    );
  }
  writeFileSync(join(dir, holderFileName), `${process.pid}\n`);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      rmSync(join(dir, holderFileName), { force: true });
      db.close();
    },
  };
}
