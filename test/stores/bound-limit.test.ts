/**
 * A bare `LIMIT ?` makes SQLite plan the statement again every time the parameter is bound, which
 * better-sqlite3 does on each call (bound-limit.ts: the jobs ready query went from ≈ 3 to ≈ 12 µs).
 * better-sqlite3 doesn't expose SQLite's re-prepare counter, so this reads the store's SQL instead:
 * every LIMIT taken from a parameter goes through boundLimit().
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { boundLimit } from "../../src/stores/sqlite/bound-limit.js";

const storeDir = join(import.meta.dirname, "../../src/stores/sqlite");
/** `LIMIT` and a parameter (`?`, `?1`, `@name`, `:name`, `$name`) with no `+ 0` after it. */
const bareLimit = /LIMIT\s+(?:\?\d*|[@:$][A-Za-z_]\w*)(?!\w|\s*\+\s*0)/i;

describe("LIMIT parameters in the SQLite store", () => {
  it("boundLimit writes an expression, not a bare parameter", () => {
    expect(boundLimit()).toBe("LIMIT ? + 0");
    expect(boundLimit("@limit")).toBe("LIMIT @limit + 0");
    expect(bareLimit.test(boundLimit())).toBe(false);
    expect(bareLimit.test("SELECT 1 LIMIT ?")).toBe(true);
    expect(bareLimit.test("SELECT 1 LIMIT @limit")).toBe(true);
    expect(bareLimit.test("SELECT 1 LIMIT ${boundLimit()}")).toBe(false);
  });

  it("no statement of the store binds a bare LIMIT parameter", () => {
    const offenders = readdirSync(storeDir, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts") || f.endsWith(".sql"))
      .flatMap((f) =>
        readFileSync(join(storeDir, f), "utf8")
          .split("\n")
          .flatMap((line, i) => (bareLimit.test(line) && !line.trimStart().startsWith("*") ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(offenders).toEqual([]);
  });
});
