/** Each store's migrations are numbered once each: two branches that both add "042_…" would make every start fail. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../src/stores");

describe("migration numbers", () => {
  for (const store of ["sqlite", "postgres"]) {
    it(`${store}: every .sql migration has a number of its own`, () => {
      const files = readdirSync(join(root, store, "migrations")).filter((f) => f.endsWith(".sql"));
      const byNumber = new Map<number, string[]>();
      for (const f of files) {
        const n = Number(/^(\d+)_/.exec(f)?.[1]);
        expect(Number.isInteger(n), `${f} starts with its number`).toBe(true);
        byNumber.set(n, [...(byNumber.get(n) ?? []), f]);
      }
      expect([...byNumber.values()].filter((names) => names.length > 1)).toEqual([]);
    });
  }
});
