/** docs/errors.md documents every code of the catalog, with the jobs API status the server really uses. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { type ErrorCode, errorCatalog } from "../../src/core/errors.js";
import { httpStatusOf } from "../../src/protocols/jobs/http-errors.js";

const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
const rows = new Map(
  doc
    .split("\n")
    .map((line) => /^\| `(\w+)` \|.*\| (\d{3})[^|]*\|$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1]!, Number(m[2])]),
);

describe("docs/errors.md", () => {
  for (const code of Object.keys(errorCatalog) as ErrorCode[]) {
    it(`documents ${code} with its jobs API status`, () => {
      expect(rows.has(code), `${code} is missing from docs/errors.md`).toBe(true);
      expect(rows.get(code)).toBe(httpStatusOf(code));
    });
  }

  it("documents no code the catalog doesn't have", () => {
    expect([...rows.keys()].filter((c) => !(c in errorCatalog))).toEqual([]);
  });
});
