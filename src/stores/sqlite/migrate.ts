/** Applies numbered .sql migrations in order, once each, recording them in schema_migrations. */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";

/** Migrations live beside the source; the build copies them next to the compiled file too. */
export function migrationsDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "migrations");
}

/**
 * The database was written by a newer Sluice: its schema has migrations this code doesn't know,
 * and running on it could misread or damage data. Nothing was changed.
 */
export class SchemaTooNewError extends Error {
  override readonly name = "SchemaTooNewError";
}

/** Returns the file names of the migrations it applied (none when the schema was current). */
export function migrate(db: Database.Database, dir = migrationsDir()): string[] {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)");
  const appliedRows = db.prepare<[], { version: number; name: string }>("SELECT version, name FROM schema_migrations ORDER BY version").all();
  const applied = new Set(appliedRows.map((r) => r.version));
  const files = readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort();
  const known = new Set(files.map((f) => Number.parseInt(f, 10)));
  const unknown = appliedRows.filter((r) => !known.has(r.version));
  if (unknown.length > 0) {
    const newest = files.length > 0 ? files[files.length - 1] : "none";
    throw new SchemaTooNewError(
      `${db.name} was written by a newer version of Sluice: it has schema migration(s) ${unknown.map((r) => r.name).join(", ")}, which this version (newest migration ${newest}) does not know. ` +
        "Run the newer version, or restore a backup taken before the upgrade. Nothing was changed.",
    );
  }
  const ran: string[] = [];
  for (const file of files) {
    const version = Number.parseInt(file, 10);
    if (applied.has(version)) continue;
    const sql = readFileSync(join(dir, file), "utf8");
    db.transaction(() => {
      db.exec(sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)").run(version, file, Date.now());
    })();
    ran.push(file);
  }
  return ran;
}
