/**
 * Which store the servers of a test run use: SQLite by default, PostgreSQL when the run sets
 * SLUICE_TEST_STORE=postgres (the `postgres` project of vitest.config.ts runs the SQS
 * compatibility and jobs end-to-end suites that way: the same tests, the other store). A data dir
 * keeps its database, so a server restarted on it finds what it wrote.
 */
import type { ServerConfig } from "../../src/server/config.js";
import { createDatabase } from "./postgres.js";

export type TestStoreKind = "sqlite" | "postgres";

export function testStoreKind(): TestStoreKind {
  const kind = process.env.SLUICE_TEST_STORE ?? "sqlite";
  if (kind !== "sqlite" && kind !== "postgres") throw new Error(`SLUICE_TEST_STORE must be sqlite or postgres, got "${kind}"`);
  return kind;
}

const databaseOf = new Map<string, Promise<string>>();

/** The server options that pick the run's store for a server on `dataDir`. */
export async function testStoreConfig(dataDir: string): Promise<Partial<ServerConfig>> {
  if (testStoreKind() === "sqlite") return {};
  let url = databaseOf.get(dataDir);
  if (!url) databaseOf.set(dataDir, (url = createDatabase().then((db) => db.url)));
  return { store: "postgres", postgresUrl: await url };
}

/** The same, as `sluice serve` flags. */
export async function testStoreArgs(dataDir: string): Promise<string[]> {
  const config = await testStoreConfig(dataDir);
  return config.store === "postgres" ? ["--store", "postgres", "--postgres-url", config.postgresUrl!] : [];
}
