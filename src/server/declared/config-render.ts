/** A config document written out as YAML, TOML or JSON (`sluice config export --format`). */
import { stringify as stringifyToml } from "smol-toml";
import { stringify as stringifyYaml } from "yaml";
import type { ConfigFormat } from "./config-formats.js";

export { type ConfigFormat, configFormats } from "./config-formats.js";

/** A null inside a value (a schedule's input, say): TOML has no null, so such a document can't be TOML. */
function findNull(value: unknown, path: string): string | undefined {
  if (value === null) return path;
  if (typeof value !== "object") return undefined;
  for (const [k, v] of Object.entries(value as object)) {
    const found = findNull(v, path === "" ? k : `${path}.${k}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function renderConfig(doc: Record<string, unknown>, format: ConfigFormat): string {
  if (format === "json") return `${JSON.stringify(doc, null, 2)}\n`;
  if (format === "yaml") return stringifyYaml(doc, { lineWidth: 0 });
  const withNull = findNull(doc, "");
  if (withNull !== undefined) throw new Error(`${withNull} is null, which TOML can't write: export as YAML or JSON instead.`);
  return `${stringifyToml(doc)}\n`;
}
