/**
 * `LIMIT` from a bound parameter, written so that binding it doesn't re-prepare the statement.
 *
 * SQLite (3.53, as better-sqlite3 bundles it) looks at a bare `LIMIT ?`'s value while planning and
 * so marks the statement to be planned again whenever that parameter is bound anew — which
 * better-sqlite3 does on every call, so each call paid a full parse and plan. `? + 0` is the
 * same number to SQLite's LIMIT but an
 * expression the planner doesn't read, so the plan is made once. test/stores/bound-limit.test.ts
 * keeps bare parameters out of the store's SQL.
 */
export function boundLimit(parameter = "?"): string {
  return `LIMIT ${parameter} + 0`;
}
