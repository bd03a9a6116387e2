/** The version in package.json, found from this file whether it runs from src/ (tsx) or dist/. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export function packageVersion(): string {
  try {
    const path = fileURLToPath(new URL("../../package.json", import.meta.url));
    const pkg = JSON.parse(readFileSync(path, "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}
