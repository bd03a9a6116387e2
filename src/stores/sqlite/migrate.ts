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
    const rebuilt = rebuiltTables(sql);
    const apply = (): void => {
      db.transaction(() => {
        const triggers = rebuilt.length === 0 ? [] : triggersOn(db, rebuilt);
        db.exec(sql);
        if (rebuilt.length > 0) restoreTriggers(db, triggers, file);
        db.prepare("INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)").run(version, file, Date.now());
      })();
    };
    if (rebuilt.length === 0) apply();
    else withoutForeignKeys(db, apply);
    ran.push(file);
  }
  return ran;
}

/**
 * The tables a migration rebuilds (create new, copy, drop, rename: how SQLite changes a constraint),
 * named on its first line as `-- rebuilds: a, b`. Dropping a table drops its triggers, and with
 * foreign keys on it deletes the rows that reference it: see withoutForeignKeys and restoreTriggers.
 */
function rebuiltTables(sql: string): string[] {
  const first = /^-- rebuilds: ([a-z_, ]+)\n/.exec(sql);
  return first ? first[1]!.split(",").map((t) => t.trim()).filter((t) => t.length > 0) : [];
}

interface Trigger {
  name: string;
  sql: string;
}

function triggersOn(db: Database.Database, tables: readonly string[]): Trigger[] {
  const rows = db.prepare<[], { name: string; tbl_name: string; sql: string }>("SELECT name, tbl_name, sql FROM sqlite_schema WHERE type = 'trigger'").all();
  return rows.filter((r) => tables.includes(r.tbl_name)).map((r) => ({ name: r.name, sql: r.sql }));
}

/** Puts back the triggers the rebuild dropped with the old table; checks the foreign keys still hold. */
function restoreTriggers(db: Database.Database, triggers: readonly Trigger[], file: string): void {
  const exists = db.prepare<[string], number>("SELECT 1 FROM sqlite_schema WHERE type = 'trigger' AND name = ?").pluck();
  for (const t of triggers) if (exists.get(t.name) === undefined) db.exec(t.sql);
  const broken = db.prepare("PRAGMA foreign_key_check").all();
  if (broken.length > 0) throw new Error(`Migration ${file} left ${broken.length} row(s) whose foreign key names no row; nothing was changed.`);
}

/** Foreign keys can only be switched outside a transaction; on again (if they were) afterwards. */
function withoutForeignKeys(db: Database.Database, run: () => void): void {
  const wasOn = db.pragma("foreign_keys", { simple: true }) === 1;
  db.pragma("foreign_keys = OFF");
  try {
    run();
  } finally {
    if (wasOn) db.pragma("foreign_keys = ON");
  }
}
