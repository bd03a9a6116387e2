// tsc compiles only TypeScript: copy the SQL migrations (and other assets) beside the compiled code.
// Each copy replaces the folder, so a file renamed or removed in src (a renumbered migration) is
// not left behind in dist to be applied as well.
import { cpSync, existsSync, rmSync } from "node:fs";

const assets = [["src/stores/sqlite/migrations", "dist/stores/sqlite/migrations"], ["src/stores/postgres/migrations", "dist/stores/postgres/migrations"], ["src/dashboard/public", "dist/dashboard/public"]];
for (const [from, to] of assets) {
  rmSync(to, { recursive: true, force: true });
  if (existsSync(from)) cpSync(from, to, { recursive: true });
}
