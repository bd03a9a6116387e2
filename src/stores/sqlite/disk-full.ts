/**
 * Whether an error from the SQLite store means its disk is full: SQLite's SQLITE_FULL (a write
 * that found no space), or ENOSPC/EDQUOT from the WAL's fdatasync (a filesystem that claims space
 * only at writeback, such as NFS).
 */
export function isSqliteDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT";
}
