// tsc compiles only TypeScript: copy the SQL migrations (and other assets) beside the compiled code.
import { cpSync, existsSync } from "node:fs";

const assets = [["src/stores/sqlite/migrations", "dist/stores/sqlite/migrations"], ["src/stores/postgres/migrations", "dist/stores/postgres/migrations"], ["src/dashboard/public", "dist/dashboard/public"]];
for (const [from, to] of assets) {
  if (existsSync(from)) cpSync(from, to, { recursive: true });
}
