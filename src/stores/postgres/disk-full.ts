/** PostgreSQL's disk_full (SQLSTATE 53100): a write the database had no space for. */
export function isPostgresDiskFull(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "53100";
}
