/**
 * Queue configs stored before core named queues by name: their dead-letter target ARN and their
 * RedriveAllowPolicy's source ARNs become queue names when each store migrates (SQLite 018,
 * PostgreSQL 006), everything else in the config stays as it was, and each queue keeps its
 * account: two accounts' queues of one name each keep their own references.
 */
import Database from "better-sqlite3";
import { copyFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ManualClock, QueueService, listDeadLetterSourceQueues } from "../../src/core/index.js";
import { Db } from "../../src/stores/postgres/db.js";
import { migrate as migratePostgres, migrationsDir as postgresMigrationsDir } from "../../src/stores/postgres/migrate.js";
import { migrate as migrateSqlite, migrationsDir as sqliteMigrationsDir } from "../../src/stores/sqlite/migrate.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { usePostgresDatabase } from "../support/postgres.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";
import { counterIds } from "../core/service-harness.js";

afterAll(removeTempDirs);

/** The server's own account ("" in the store) and another one, each with ARNs of its own id. */
const serverAccountId = "123456789012";
const otherAccount = "210987654321";
const arn = (accountId: string, name: string): string => `arn:aws:sqs:eu-west-2:${accountId}:${name}`;

/** Configs as the SQS layer had core store them (ARNs, beside settings that must not change), by account. */
function legacyConfigs(accountId: string, timeout: number): Record<string, object> {
  return {
    src: { visibilityTimeoutSeconds: timeout, fifoQueue: false, redrivePolicy: { deadLetterTargetArn: arn(accountId, "src-dlq"), maxReceiveCount: 3 } },
    "src-dlq": { visibilityTimeoutSeconds: 30, fifoQueue: false, redriveAllowPolicy: { redrivePermission: "byQueue", sourceQueueArns: [arn(accountId, "src"), arn(accountId, "other_src-2")] } },
    open: { visibilityTimeoutSeconds: 30, fifoQueue: false, redriveAllowPolicy: { redrivePermission: "allowAll" } },
    plain: { visibilityTimeoutSeconds: 12, fifoQueue: false },
  };
}

function expectedConfigs(timeout: number): Record<string, object> {
  return {
    src: { visibilityTimeoutSeconds: timeout, fifoQueue: false, redrivePolicy: { deadLetterQueueName: "src-dlq", maxReceiveCount: 3 } },
    "src-dlq": { visibilityTimeoutSeconds: 30, fifoQueue: false, redriveAllowPolicy: { redrivePermission: "byQueue", sourceQueueNames: ["src", "other_src-2"] } },
    open: { visibilityTimeoutSeconds: 30, fifoQueue: false, redriveAllowPolicy: { redrivePermission: "allowAll" } },
    plain: { visibilityTimeoutSeconds: 12, fifoQueue: false },
  };
}

/** Each account's src tells its own apart by visibility timeout. */
const accounts = [
  { account: "", legacy: legacyConfigs(serverAccountId, 45), expected: expectedConfigs(45) },
  { account: otherAccount, legacy: legacyConfigs(otherAccount, 46), expected: expectedConfigs(46) },
];

/** A directory holding `from`'s migrations numbered below `version`. */
async function migrationsBefore(from: string, version: number): Promise<string> {
  const dir = await makeTempDir("sluice-migrations-");
  for (const file of readdirSync(from).filter((f) => /^\d+_.+\.sql$/.test(f) && Number.parseInt(f, 10) < version)) copyFileSync(join(from, file), join(dir, file));
  return dir;
}

describe("queue references by name: migrating stored configs", () => {
  it("SQLite (018)", async () => {
    const filename = join(await makeTempDir("sluice-refs-"), "sluice.db");
    const db = new Database(filename);
    migrateSqlite(db, await migrationsBefore(sqliteMigrationsDir(), 18));
    const insert = db.prepare("INSERT INTO queues (account, name, config, tags, created_at_ms, updated_at_ms) VALUES (?, ?, ?, '{}', 1, 1)");
    for (const { account, legacy } of accounts) for (const [name, config] of Object.entries(legacy)) insert.run(account, name, JSON.stringify(config));
    db.close();

    const store = openSqliteStore({ filename });
    try {
      expect(store.migrationsApplied).toContain("018_queue_references_by_name.sql");
      for (const { account, expected } of accounts) {
        for (const [name, config] of Object.entries(expected)) expect((await store.queueGet({ account, name }))?.config, `${account}/${name}`).toEqual(config);
      }
      // A migrated reference resolves in its queue's account: each src dead-letters to its own src-dlq.
      const queues = new QueueService({ store, clock: new ManualClock(), ids: counterIds(), senderId: serverAccountId });
      try {
        for (const { account } of accounts) {
          const sources = await listDeadLetterSourceQueues(queues.forAccount(account), "src-dlq");
          expect(sources.queues.map((q) => [q.account, q.name, q.config.visibilityTimeoutSeconds])).toEqual([[account, "src", account === "" ? 45 : 46]]);
        }
      } finally {
        queues.waiters.closeAll();
      }
    } finally {
      await store.close();
    }
  });

  const postgres = usePostgresDatabase();
  it("PostgreSQL (006)", async () => {
    const db = new Db({ url: postgres.url, poolSize: 2 });
    try {
      await migratePostgres(db, 1, await migrationsBefore(postgresMigrationsDir(), 6));
      for (const { account, legacy } of accounts) {
        for (const [name, config] of Object.entries(legacy)) {
          await db.query("INSERT INTO queues (account, name, config, tags, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, '{}', 1, 1)", [account, name, JSON.stringify(config)]);
        }
      }
      expect(await migratePostgres(db, 2)).toContain(6);
      const rows = (await db.query<{ account: string; name: string; config: string }>("SELECT account, name, config FROM queues")).rows;
      for (const { account, expected } of accounts) {
        const mine = rows.filter((r) => r.account === account);
        expect(Object.fromEntries(mine.map((r) => [r.name, JSON.parse(r.config) as unknown])), account).toEqual(expected);
      }
    } finally {
      await db.pool.end();
    }
  });
});
