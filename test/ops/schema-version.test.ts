/** A database written by a newer Sluice is refused at start, with a message that says what to do, and left as it was. */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { StoreOpenError, createLogger, startServer } from "../../src/server/index.js";
import { killAllChildren, spawnCli } from "../support/cli.js";
import { makeTempDir, removeTempDirs } from "../support/tmp.js";

const quiet = createLogger({ level: "silent" });

/** A data dir whose database a future version migrated one step further. */
async function dataDirFromTheFuture(): Promise<string> {
  const dataDir = await makeTempDir("sluice-future-");
  const server = await startServer({ port: 0, dataDir, logger: quiet });
  await server.close();
  const db = new Database(join(dataDir, "sluice.db"));
  db.prepare("INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (999, '999_from_the_future.sql', 0)").run();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return dataDir;
}

const digest = (file: string): string => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("a database newer than the code", () => {
  afterEach(async () => {
    await killAllChildren();
    await removeTempDirs();
  });

  it("is refused by startServer, unchanged", async () => {
    const dataDir = await dataDirFromTheFuture();
    const before = digest(join(dataDir, "sluice.db"));
    const start = startServer({ port: 0, dataDir, logger: quiet });
    await expect(start).rejects.toThrow(StoreOpenError);
    await expect(start).rejects.toThrow(/newer version of Sluice: it has schema migration\(s\) 999_from_the_future\.sql, which this version \(newest migration \d+_\w+\.sql\) does not know/);
    expect(digest(join(dataDir, "sluice.db"))).toBe(before);
  });

  it("stops `sluice serve` with exit status 1 and the reason", async () => {
    const dataDir = await dataDirFromTheFuture();
    const failed = spawnCli({ dataDir });
    await expect(failed).rejects.toThrow(/CLI exited before listening \(code 1[\s\S]*sluice: .*newer version of Sluice[\s\S]*restore a backup taken before the upgrade/);
  });
});
