/**
 * Numbered .sql migrations, applied in order once each and recorded in schema_migrations. All of
 * it runs in one transaction under a transaction-level advisory lock, so N nodes starting at once
 * apply each migration once (the others wait, then find nothing to do) — and it works through a
 * pooler in transaction mode, where a session-level lock would not hold.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Db } from "./db.js";

/** Migrations live beside the source; the build copies them next to the compiled file too. */
export function migrationsDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "migrations");
}

/** pg_advisory_xact_lock's key for migrations: any constant no other lock of Sluice's uses. */
export const migrationLockKey = 0x511ce;

export class SchemaTooNewError extends Error {
  override readonly name = "SchemaTooNewError";
}

interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function readMigrations(dir = migrationsDir()): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort()
    .map((name) => ({ version: Number.parseInt(name, 10), name, sql: readFileSync(join(dir, name), "utf8") }));
}

/** Applies what is missing; returns the versions this call applied. */
export async function migrate(db: Db, nowMs: number, dir = migrationsDir()): Promise<number[]> {
  const migrations = readMigrations(dir);
  const known = migrations.at(-1)?.version ?? 0;
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [migrationLockKey]);
    await tx.query("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at_ms bigint NOT NULL)");
    const applied = new Set((await tx.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version));
    const newest = Math.max(0, ...applied);
    if (newest > known) {
      throw new SchemaTooNewError(
        `The database's schema is at version ${newest}, newer than this Sluice knows (up to ${known}): a newer Sluice has migrated it. Run that version (or newer) on every node; older nodes must not write to it.`,
      );
    }
    const done: number[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await tx.query(m.sql);
      await tx.query("INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)", [m.version, m.name, nowMs]);
      done.push(m.version);
    }
    return done;
  });
}
