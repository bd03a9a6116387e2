/**
 * PostgreSQL for tests: one throwaway cluster per test run, started by the first test file that
 * asks (test/postgres-setup.ts removes it at the end), and a fresh database per test file,
 * dropped in afterAll. Test files call `usePostgresDatabase()` at top level.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { type PostgresCluster, startCluster } from "./postgres-cluster.js";

declare module "vitest" {
  interface ProvidedContext {
    /** Where the run's cluster lives once a test file started it (test/postgres-setup.ts). */
    postgresRunDir: string;
  }
}

const clusterFile = "cluster.json";
const failedFile = "failed.txt";
const startTimeoutMs = 90_000;

let cluster: Promise<PostgresCluster> | undefined;

/**
 * The run's cluster: the first caller (across test workers) starts it under a directory lock, the
 * others wait for the file it writes. A start that failed fails every caller with its reason.
 */
export function runCluster(): Promise<PostgresCluster> {
  return (cluster ??= (async () => {
    const runDir = inject("postgresRunDir");
    const lock = join(runDir, "starting");
    let mine = true;
    await mkdir(lock).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "EEXIST") throw err;
      mine = false;
    });
    if (mine) {
      try {
        const started = await startCluster(join(runDir, "cluster"));
        await writeFile(join(runDir, clusterFile), JSON.stringify(started));
        return started;
      } catch (err) {
        await writeFile(join(runDir, failedFile), err instanceof Error ? err.message : String(err));
        throw err;
      }
    }
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      if (existsSync(join(runDir, clusterFile))) return JSON.parse(await readFile(join(runDir, clusterFile), "utf8")) as PostgresCluster;
      if (existsSync(join(runDir, failedFile))) throw new Error(await readFile(join(runDir, failedFile), "utf8"));
      if (Date.now() > deadline) throw new Error(`the test PostgreSQL cluster did not start within ${startTimeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  })());
}

let databases = 0;

/** Creates an empty database in the run's cluster; returns its connection string. */
export async function createDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const c = await runCluster();
  const name = `sluice_t${process.pid}_${++databases}`;
  await adminQuery(c, `CREATE DATABASE ${name}`);
  return {
    url: `postgres://postgres@127.0.0.1:${c.port}/${name}`,
    name,
    // FORCE: a node a test killed may leave sessions behind for a moment.
    drop: () => adminQuery(c, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

async function adminQuery(c: PostgresCluster, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: c.adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database for this test file (created in beforeAll, dropped in afterAll). */
export function usePostgresDatabase(): { readonly url: string } {
  let db: Awaited<ReturnType<typeof createDatabase>> | undefined;
  beforeAll(async () => {
    db = await createDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });
  return {
    get url(): string {
      if (!db) throw new Error("usePostgresDatabase: the database is made in beforeAll; read url inside a hook or test");
      return db.url;
    },
  };
}
