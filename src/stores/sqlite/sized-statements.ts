/**
 * Statements whose SQL depends on a list's length (`seq IN (?, ?, …)`, multi-row VALUES):
 * prepared on first use for each length, then reused.
 */
import type Database from "better-sqlite3";

export type SizedStatements<R> = (n: number) => Database.Statement<unknown[], R>;

/** `marks(3)` is `?, ?, ?`. */
export function marks(n: number): string {
  return Array(n).fill("?").join(", ");
}

export function sizedStatements<R = unknown>(db: Database.Database, sqlFor: (n: number) => string): SizedStatements<R> {
  const prepared = new Map<number, Database.Statement<unknown[], R>>();
  return (n) => {
    let statement = prepared.get(n);
    if (statement === undefined) {
      statement = db.prepare<unknown[], R>(sqlFor(n));
      prepared.set(n, statement);
    }
    return statement;
  };
}
