/**
 * GroupCommitter on a real SQLite file: a failing write is undone alone, the group's first (run
 * without a savepoint) as any other; work a write defers (atEnd, deferWrites) runs later in its
 * group, in the same transaction, and a failing one is undone alone.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { GroupCommitter } from "../../src/stores/sqlite/group-commit.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup(): { db: Database.Database; writes: GroupCommitter; rows: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), "sluice-group-commit-"));
  dirs.push(dir);
  const db = new Database(join(dir, "t.db"));
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE t (v TEXT NOT NULL)");
  const writes = new GroupCommitter(db);
  const rows = (): string[] => db.prepare<[], string>("SELECT v FROM t ORDER BY rowid").pluck().all();
  return { db, writes, rows };
}

describe("GroupCommitter writes", () => {
  for (const failing of [0, 1, 2]) {
    it(`write ${failing + 1} of 3 failing after it wrote is undone alone; the others commit in one transaction`, async () => {
      const { db, writes, rows } = setup();
      const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
      const outcomes = await Promise.allSettled(
        ["a", "b", "c"].map((v, i) =>
          writes.run(() => {
            insert.run(v);
            insert.run(`${v}2`);
            if (i === failing) throw new Error(`write ${v} fails`);
            return v;
          }),
        ),
      );
      expect(outcomes.map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message))).toEqual(["a", "b", "c"].map((v, i) => (i === failing ? `write ${v} fails` : v)));
      expect(rows()).toEqual(["a", "a2", "b", "b2", "c", "c2"].filter((v) => !v.startsWith("abc"[failing]!)));
      expect(writes.transactions).toBe(1);
      expect(db.inTransaction).toBe(false);
    });
  }

  it("a first write that fails takes nothing with it that a later write of the group left for the end", async () => {
    const { db, writes, rows } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    const first = writes.run(() => {
      insert.run("a");
      throw new Error("first fails");
    });
    const second = writes.run(() => {
      insert.run("b");
      writes.atEnd(() => void insert.run("end"));
    });
    await expect(first).rejects.toThrow("first fails");
    await second;
    expect(rows()).toEqual(["b", "end"]);
  });
});

describe("GroupCommitter.atEnd", () => {
  it("runs deferred work after every write of the group, in the same transaction", async () => {
    const { db, writes, rows } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    const seenByEnd: string[][] = [];
    const first = writes.run(() => {
      insert.run("a");
      writes.atEnd(() => {
        seenByEnd.push(rows());
        insert.run("end");
      });
      return "first";
    });
    const second = writes.run(() => {
      insert.run("b");
      return "second";
    });
    expect(await Promise.all([first, second])).toEqual(["first", "second"]);
    // The deferred work saw the later write too, and committed with the group.
    expect(seenByEnd).toEqual([["a", "b"]]);
    expect(rows()).toEqual(["a", "b", "end"]);
    expect(writes.transactions).toBe(1);
  });

  it("a deferred step that fails is undone alone: the group's writes and the other steps commit", async () => {
    const { db, writes, rows } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    const done = writes.run(() => {
      insert.run("a");
      writes.atEnd(() => {
        insert.run("half");
        throw new Error("fails after writing");
      });
      writes.atEnd(() => void insert.run("other"));
    });
    await done;
    expect(rows()).toEqual(["a", "other"]);
  });

  it("is refused outside a running write", () => {
    const { writes } = setup();
    expect(() => writes.atEnd(() => {})).toThrow(/atEnd\(\) is for a write that is running/);
  });
});

describe("GroupCommitter.deferWrites", () => {
  it("writes what was left before the group's next write that isn't beside it, once", async () => {
    const { db, writes, rows } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    const seenBy: Record<string, string[]> = {};
    const left = writes.run(() => writes.deferWrites(() => void insert.run("deferred")), { besideDeferred: true });
    const beside = writes.run(() => void (seenBy.beside = rows()), { besideDeferred: true });
    const plain = writes.run(() => void (seenBy.plain = rows()));
    const after = writes.run(() => void (seenBy.after = rows()));
    await Promise.all([left, beside, plain, after]);
    expect(seenBy).toEqual({ beside: [], plain: ["deferred"], after: ["deferred"] });
    expect(rows()).toEqual(["deferred"]);
    expect(writes.transactions).toBe(1);
  });

  it("with no later write to stop them, they are written after the group's atEnd steps, which see them unwritten", async () => {
    const { db, writes, rows } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    let seenByEnd: string[] = [];
    await writes.run(
      () => {
        writes.deferWrites(() => void insert.run("deferred"));
        writes.atEnd(() => void (seenByEnd = rows()));
      },
      { besideDeferred: true },
    );
    expect(seenByEnd).toEqual([]);
    expect(rows()).toEqual(["deferred"]);
  });

  it("a deferred write that fails is undone alone; the write that left it still succeeds (its owner reports the failure)", async () => {
    const { db, writes, rows } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    const left = writes.run(
      () => {
        insert.run("a");
        writes.deferWrites(() => {
          insert.run("half");
          throw new Error("fails after writing");
        });
        return "left";
      },
      { besideDeferred: true },
    );
    const other = writes.run(() => void insert.run("b"));
    expect(await Promise.all([left, other])).toEqual(["left", undefined]);
    expect(rows()).toEqual(["a", "b"]);
  });

  it("is refused outside a running write", () => {
    const { writes } = setup();
    expect(() => writes.deferWrites(() => {})).toThrow(/deferWrites\(\) is for a write that is running/);
  });
});

describe("GroupCommitter scheduling", () => {
  /** Queues a write from the check phase `turns` event-loop turns from now, as a request read in a later poll would be. */
  function later(writes: GroupCommitter, turns: number, op: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const step = (left: number): void => {
        if (left > 0) setImmediate(() => step(left - 1));
        else writes.run(op).then(resolve, reject);
      };
      step(turns);
    });
  }

  it("a group commits at the end of its turn: a write queued in the next turn gets a commit of its own", async () => {
    const { db, writes } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    await Promise.all([writes.run(() => void insert.run("a")), later(writes, 1, () => void insert.run("b"))]);
    expect(writes.transactions).toBe(2);
  });

  it("a write that asks for one more I/O poll takes the next turn's writes into its group", async () => {
    const { db, writes, rows } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    await Promise.all([writes.run(() => void insert.run("a"), { afterNextPoll: true }), later(writes, 1, () => void insert.run("b"))]);
    expect(rows()).toEqual(["a", "b"]);
    expect(writes.transactions).toBe(1);
  });

  it("waits for one more poll at most: writes two turns later, asking again, start the next group", async () => {
    const { db, writes, rows } = setup();
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    const asking = (v: string) => () => void writes.run(() => void insert.run(v), { afterNextPoll: true });
    const first = writes.run(() => void insert.run("a"), { afterNextPoll: true });
    // Every turn brings another write that asks: the first group still commits after one extra poll.
    await new Promise<void>((resolve) => setImmediate(() => (asking("b")(), setImmediate(() => (asking("c")(), resolve())))));
    await first;
    expect(writes.transactions).toBe(1);
    expect(rows()).toEqual(["a", "b"]);
    await new Promise<void>((resolve) => setImmediate(() => setImmediate(() => setImmediate(resolve))));
    expect(rows()).toEqual(["a", "b", "c"]);
    expect(writes.transactions).toBe(2);
  });
});
