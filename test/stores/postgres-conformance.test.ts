/**
 * The store conformance suite against the PostgreSQL store, on a real PostgreSQL 15 (a throwaway
 * cluster, a fresh database for this file: test/support/postgres.ts). Each case starts on empty
 * tables; `another()` opens a second store on the database, with its own pool and its own
 * listening connection, as a second node would.
 */
import pg from "pg";
import { openPostgresStore } from "../../src/stores/postgres/open.js";
import type { PostgresStore } from "../../src/stores/postgres/postgres-store.js";
import { describeStoreConformance } from "../../src/stores/testkit/conformance.js";
import { usePostgresDatabase } from "../support/postgres.js";

const database = usePostgresDatabase();

async function emptyTables(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('schema_migrations', 'server_secrets')");
    await client.query(`TRUNCATE ${rows.map((r) => r.tablename).join(", ")} CASCADE`);
    // The event log's one-row floor, as its migration made it: empty, nothing pruned. Sequences
    // keep going (TRUNCATE doesn't restart them): ids are never reused.
    await client.query("INSERT INTO job_event_floor (id, pruned_through_id) VALUES (1, 0)");
  } finally {
    await client.end();
  }
}

describeStoreConformance("postgres", async () => {
  const open = (): Promise<PostgresStore> => openPostgresStore({ url: database.url, poolSize: 6 });
  let store = await open();
  await emptyTables(database.url);
  const others: PostgresStore[] = [];
  return {
    get store() {
      return store;
    },
    async reopen() {
      await store.close();
      store = await open();
      return store;
    },
    async another() {
      const other = await open();
      others.push(other);
      return other;
    },
    async cleanup() {
      for (const other of others) await other.close();
      await store.close();
    },
  };
});
