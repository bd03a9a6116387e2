/**
 * The store guard on its own, with each store's real error class: SQLite's SQLITE_FULL and
 * PostgreSQL's 53100 become StorageFull (other errors pass unchanged), the state turns unwritable
 * once however many calls fail, and a probe that succeeds turns it writable again.
 * (test/ops/disk-full.test.ts fills a real disk under a real server.)
 */
import Database from "better-sqlite3";
import pg from "pg";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { SluiceError } from "../../src/core/errors.js";
import { createLogger } from "../../src/server/logger.js";
import { StoreWritability } from "../../src/server/store-writability.js";
import { isPostgresDiskFull } from "../../src/stores/postgres/disk-full.js";
import { isSqliteDiskFull } from "../../src/stores/sqlite/disk-full.js";

function capture(): { logger: ReturnType<typeof createLogger>; messages: () => string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ level: "info", destination }), messages: () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg) };
}

function postgresDiskFull(): Error {
  const err = new pg.DatabaseError('could not extend file "base/16384/16385": No space left on device', 0, "error");
  err.code = "53100";
  return err;
}

const cases = [
  { store: "SQLite", isDiskFull: isSqliteDiskFull, full: () => new Database.SqliteError("database or disk is full", "SQLITE_FULL") },
  { store: "PostgreSQL", isDiskFull: isPostgresDiskFull, full: postgresDiskFull },
];

describe("the store guard", () => {
  for (const c of cases) {
    it(`${c.store}: a disk-full failure is StorageFull, said once; a succeeding probe ends it`, async () => {
      const log = capture();
      let probeOk = false;
      const changes: boolean[] = [];
      let recovered: () => void = () => {};
      const back = new Promise<void>((resolve) => (recovered = resolve));
      const writability = new StoreWritability({
        logger: log.logger,
        isDiskFull: c.isDiskFull,
        probe: async () => {
          if (!probeOk) throw c.full();
        },
        probeIntervalMs: 5,
        onChange: (ok) => {
          changes.push(ok);
          if (ok) recovered();
        },
      });
      let failWith: Error | undefined;
      const store = writability.guard({
        rows: 0,
        async write(): Promise<number> {
          if (failWith) throw failWith;
          return ++this.rows;
        },
        read(): number {
          if (failWith) throw failWith;
          return this.rows;
        },
      });
      expect(await store.write()).toBe(1);

      failWith = c.full();
      for (let i = 0; i < 3; i++) await expect(store.write()).rejects.toMatchObject({ name: "SluiceError", code: "StorageFull" });
      expect(() => store.read()).toThrow(SluiceError);
      expect(writability.writable).toBe(false);
      failWith = new Error("something else");
      await expect(store.write()).rejects.toThrow("something else");
      expect(changes).toEqual([false]);

      failWith = undefined;
      probeOk = true;
      await back;
      expect(writability.writable).toBe(true);
      expect(await store.write()).toBe(2);
      expect(changes).toEqual([false, true]);
      expect(log.messages()).toEqual([
        "store not writable: the disk is full; writes answer 503 StorageFull and /readyz 503 until space is freed",
        "store writable again: space was freed; writes are served and /readyz answers 200",
      ]);
      writability.close();
    });
  }

  it("classifies only its own store's errors", () => {
    expect(isSqliteDiskFull(postgresDiskFull())).toBe(false);
    expect(isPostgresDiskFull(new Database.SqliteError("database or disk is full", "SQLITE_FULL"))).toBe(false);
    expect(isSqliteDiskFull(Object.assign(new Error("no space"), { code: "ENOSPC" }))).toBe(true);
    expect(isSqliteDiskFull(new Database.SqliteError("constraint failed", "SQLITE_CONSTRAINT"))).toBe(false);
  });
});
