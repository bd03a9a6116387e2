/**
 * Pipelined WAL sync: a write is answered only after a sync that began after its commit, and
 * reads wait the same way. The fsync itself is held open by a test double (the one thing a test
 * can't schedule on a real disk); the database, its WAL and the statements are real.
 */
import { fdatasyncSync, fstatSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { GroupCommitter } from "../../src/stores/sqlite/group-commit.js";
import { type InlineSync, type SyncFn, WalSyncer } from "../../src/stores/sqlite/wal-syncer.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { type QueueRecord, defaultQueueConfig } from "../../src/core/queue.js";
import { messageSend } from "../../src/stores/testkit/one-call.js";
import { newJobFor } from "../../src/stores/testkit/conformance-jobs-kit.js";

/** A sync that completes only when the test says so; counts what it was asked. */
function heldSync(): { sync: SyncFn; started: number; release(error?: Error): void; pending(): number } {
  const calls: Array<(error: Error | null) => void> = [];
  const h = {
    started: 0,
    sync: ((_fd, done) => {
      h.started++;
      calls.push(done);
    }) as SyncFn,
    release(error?: Error) {
      const done = calls.shift();
      if (!done) throw new Error("no sync in flight");
      done(error ?? null);
    },
    pending: () => calls.length,
  };
  return h;
}

/** Lets resolved promise callbacks run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("WAL syncer and group commit", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function openDb(): { db: Database.Database; walPath: string } {
    const dir = mkdtempSync(join(tmpdir(), "sluice-walsync-"));
    dirs.push(dir);
    const filename = join(dir, "t.db");
    const db = new Database(filename);
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec("CREATE TABLE t (v INTEGER)");
    return { db, walPath: `${filename}-wal` };
  }

  it("syncs the file now at the WAL's path: a replaced or deleted WAL is reopened", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-walsync-"));
    dirs.push(dir);
    const walPath = join(dir, "t.db-wal");
    writeFileSync(walPath, "first");
    const synced: number[] = [];
    const syncer = new WalSyncer(walPath, (fd, done) => {
      synced.push(fstatSync(fd).ino);
      done(null);
    });
    const syncOnce = (): Promise<void> => {
      syncer.committed();
      return syncer.durable();
    };
    await syncOnce();
    await syncOnce();
    // Replaced by a rename over it, then deleted and written anew: each time a new inode.
    writeFileSync(`${walPath}.new`, "second");
    renameSync(`${walPath}.new`, walPath);
    await syncOnce();
    const renamed = statSync(walPath).ino;
    rmSync(walPath);
    writeFileSync(walPath, "third");
    await syncOnce();
    const recreated = statSync(walPath).ino;
    expect(synced[0]).toBe(synced[1]);
    expect(synced[2]).toBe(renamed);
    expect(synced[3]).toBe(recreated);
    expect(synced[2]).not.toBe(synced[1]);
    syncer.close();
  });

  it("answers a write only after a sync that started after its commit", async () => {
    const { db, walPath } = openDb();
    const held = heldSync();
    const writes = new GroupCommitter(db, new WalSyncer(walPath, held.sync));
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");

    let firstDone = false;
    const first = writes.run(() => insert.run(1)).then(() => (firstDone = true));
    writes.flush();
    expect(held.started).toBe(1);
    await settle();
    expect(firstDone).toBe(false); // committed (visible to this connection) but not yet synced
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 1 });

    // A second group commits while the first sync is in flight: it needs a sync of its own.
    let secondDone = false;
    const second = writes.run(() => insert.run(2)).then(() => (secondDone = true));
    writes.flush();
    expect(held.started).toBe(1); // one sync at a time

    held.release();
    await first;
    await settle();
    expect(secondDone).toBe(false);
    expect(held.started).toBe(2);
    held.release();
    await second;
    expect(held.pending()).toBe(0);
    db.close();
  });

  it("a barrier with nothing committed since the last sync resolves at once; one during a sync joins it", async () => {
    const { db, walPath } = openDb();
    const held = heldSync();
    const writes = new GroupCommitter(db, new WalSyncer(walPath, held.sync));
    await writes.durable(); // nothing ever committed
    expect(held.started).toBe(0);

    const write = writes.run(() => db.prepare("INSERT INTO t (v) VALUES (1)").run());
    writes.flush();
    let barrierDone = false;
    const barrier = writes.durable().then(() => (barrierDone = true));
    await settle();
    expect(barrierDone).toBe(false);
    held.release();
    await Promise.all([write, barrier]);
    expect(held.started).toBe(1); // the barrier rode on the running sync
    db.close();
  });

  it("a group that changed nothing asks for no sync, but still waits for the one covering what it read", async () => {
    const { db, walPath } = openDb();
    const held = heldSync();
    const writes = new GroupCommitter(db, new WalSyncer(walPath, held.sync));
    const count = db.prepare<[], number>("SELECT count(*) FROM t").pluck();

    // Nothing committed before: an empty group is answered at once, with no sync at all.
    const empty = writes.run(() => count.get());
    writes.flush();
    expect(await empty).toBe(0);
    expect(held.started).toBe(0);

    // A write is committed and its sync held open; a read-only group then sees the row…
    const write = writes.run(() => db.prepare("INSERT INTO t (v) VALUES (1)").run());
    writes.flush();
    let readDone = false;
    const read = writes.run(() => count.get()).then((n) => ((readDone = true), n));
    writes.flush();
    await settle();
    // …so it is answered only with that sync, and it started no sync of its own.
    expect(readDone).toBe(false);
    expect(held.started).toBe(1);
    held.release();
    expect(await read).toBe(1);
    await write;
    expect(held.started).toBe(1);

    // A group whose only change was rolled back errs towards a sync.
    const refused = writes.run(() => {
      db.prepare("INSERT INTO t (v) VALUES (2)").run();
      throw new Error("refused after writing");
    });
    writes.flush();
    await settle();
    expect(held.started).toBe(2);
    held.release();
    await expect(refused).rejects.toThrow("refused after writing");
    expect(count.get()).toBe(1);
    db.close();
  });

  /** An inline sync that takes `costMs` on a fake clock (the real fdatasync still runs: real WAL). */
  function playedInline(costMs: number[], opts: { maxMs?: number; probeEvery?: number } = {}) {
    let now = 0;
    const calls: number[] = [];
    const inline: InlineSync = {
      sync: (fd) => {
        calls.push(fd);
        fdatasyncSync(fd);
        now += costMs[Math.min(calls.length - 1, costMs.length - 1)]!;
      },
      nowMs: () => now,
      maxMs: opts.maxMs ?? 0.5,
      probeEvery: opts.probeEvery ?? 3,
    };
    return { inline, calls };
  }

  it("syncs inline while the disk is quick: the write is answered with no pool sync", async () => {
    const { db, walPath } = openDb();
    const held = heldSync();
    const { inline, calls } = playedInline([0.2]);
    const syncer = new WalSyncer(walPath, held.sync, inline);
    const writes = new GroupCommitter(db, syncer);
    for (let v = 1; v <= 3; v++) {
      const write = writes.run(() => db.prepare("INSERT INTO t (v) VALUES (?)").run(v));
      writes.flush();
      await write;
    }
    expect(calls).toHaveLength(3);
    expect(held.started).toBe(0);
    expect(syncer.inlineSyncs).toBe(3);
    expect(syncer.syncs).toBe(3);
    db.close();
  });

  it("a slow disk sends syncs back to the pool, and every probeEvery-th one is tried inline again", async () => {
    const { db, walPath } = openDb();
    const held = heldSync();
    // First inline sync 5 ms (slow), the probe after it 0.1 ms (quick again).
    const { inline, calls } = playedInline([5, 0.1], { probeEvery: 2 });
    const syncer = new WalSyncer(walPath, held.sync, inline);
    const writes = new GroupCommitter(db, syncer);
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const writeOnce = async (v: number, viaPool: boolean): Promise<void> => {
      const write = writes.run(() => insert.run(v));
      writes.flush();
      if (viaPool) {
        await settle();
        held.release();
      }
      await write;
    };
    await writeOnce(1, false); // inline, 5 ms: now the disk counts as slow
    expect(calls).toHaveLength(1);
    await writeOnce(2, true); // pool
    await writeOnce(3, true); // pool
    expect(held.started).toBe(2);
    await writeOnce(4, false); // the probe: inline again (averages 4.02 ms, still slow)
    expect(calls).toHaveLength(2);
    await writeOnce(5, true);
    expect(held.started).toBe(3);
    expect(syncer.syncs).toBe(5);
    db.close();
  });

  it("no inline sync while a pool sync is in flight: the later commit waits for the next sync", async () => {
    const { db, walPath } = openDb();
    const held = heldSync();
    const { inline, calls } = playedInline([5, 0.1], { probeEvery: 100 });
    const writes = new GroupCommitter(db, new WalSyncer(walPath, held.sync, inline));
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const first = writes.run(() => insert.run(1));
    writes.flush(); // inline (slow)
    await first;
    const second = writes.run(() => insert.run(2));
    writes.flush(); // to the pool, held open
    let thirdDone = false;
    const third = writes.run(() => insert.run(3)).then(() => (thirdDone = true));
    writes.flush();
    await settle();
    expect(calls).toHaveLength(1);
    expect(thirdDone).toBe(false);
    held.release();
    await second;
    await settle();
    expect(thirdDone).toBe(false); // committed during the first pool sync: needs another
    held.release();
    await third;
    expect(calls).toHaveLength(1);
    db.close();
  });

  it("a due probe runs inline even between pool syncs, so a steady stream of commits can't starve it", async () => {
    const { db, walPath } = openDb();
    const held = heldSync();
    const { inline, calls } = playedInline([5, 0.1], { probeEvery: 1 });
    const writes = new GroupCommitter(db, new WalSyncer(walPath, held.sync, inline));
    const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
    const first = writes.run(() => insert.run(1));
    writes.flush(); // inline, slow
    await first;
    const second = writes.run(() => insert.run(2));
    writes.flush(); // pool, held open
    const third = writes.run(() => insert.run(3));
    writes.flush(); // waits for the next sync
    await settle();
    expect(held.started).toBe(1);
    held.release(); // the pool sync ends with the third waiting: the probe takes it inline
    await Promise.all([second, third]);
    expect(calls).toHaveLength(2);
    expect(held.started).toBe(1);
    db.close();
  });

  it("a failed inline sync fails its writes and every later one", async () => {
    const { db, walPath } = openDb();
    const inline: InlineSync = {
      sync: () => {
        throw new Error("EIO");
      },
      nowMs: () => 0,
      maxMs: 0.5,
      probeEvery: 1,
    };
    const writes = new GroupCommitter(db, new WalSyncer(walPath, heldSync().sync, inline));
    const write = writes.run(() => db.prepare("INSERT INTO t (v) VALUES (1)").run());
    writes.flush();
    await expect(write).rejects.toThrow(/fsync of .*-wal failed.*EIO/);
    const later = writes.run(() => db.prepare("INSERT INTO t (v) VALUES (2)").run());
    writes.flush();
    await expect(later).rejects.toThrow(/refusing further writes/);
    db.close();
  });

  it("a failed sync fails its writes and every later one", async () => {
    const { db, walPath } = openDb();
    const held = heldSync();
    const writes = new GroupCommitter(db, new WalSyncer(walPath, held.sync));
    const write = writes.run(() => db.prepare("INSERT INTO t (v) VALUES (1)").run());
    writes.flush();
    held.release(new Error("EIO"));
    await expect(write).rejects.toThrow(/fsync of .*-wal failed.*EIO/);
    const later = writes.run(() => db.prepare("INSERT INTO t (v) VALUES (2)").run());
    writes.flush();
    await expect(later).rejects.toThrow(/refusing further writes/);
    await expect(writes.durable()).rejects.toThrow(/EIO/);
    db.close();
  });

  it("a store with pipelined sync fdatasyncs its real WAL and keeps what it acknowledged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-walsync-"));
    dirs.push(dir);
    const filename = join(dir, "sluice.db");
    let store = openSqliteStore({ filename, pipelinedSync: true });
    const { queue } = await store.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 1 });
    expect(store.db.pragma("synchronous", { simple: true })).toBe(1); // NORMAL: COMMIT itself doesn't fsync
    const sent = await messageSend(store, {
      queueId: queue.id,
      messages: [{ messageId: "m1", body: "hello", attributes: {}, systemAttributes: {}, bodyMd5: "x", sentAtMs: 1, visibleAtMs: 1, priority: 0, senderId: "s" }],
    });
    expect(sent).toHaveLength(1);
    await store.close();
    store = openSqliteStore({ filename });
    const stats = await store.queueStats({ queueId: queue.id, nowMs: 2, minSentAtMs: 0 });
    expect(stats.visible).toBe(1);
    await store.close();
  });
});

/** A pipelined store in `dir` whose syncs each wait for `held.release()`, with queue "q" on disk. */
async function heldStoreWithQueue(dir: string): Promise<{ held: ReturnType<typeof heldSync>; store: ReturnType<typeof openSqliteStore>; queue: QueueRecord }> {
  const held = heldSync();
  const store = openSqliteStore({ filename: join(dir, "sluice.db"), pipelinedSync: true, walSync: held.sync });
  const created = store.queueCreate({ name: "q", config: defaultQueueConfig(false), tags: {}, nowMs: 1 });
  store.writes.flush();
  held.release();
  return { held, store, queue: (await created).queue };
}

describe("pipelined store reads", () => {
  it("the event log shows an event once its commit is synced, and a read of it waits for no sync", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-walsync-"));
    try {
      const { held, store, queue } = await heldStoreWithQueue(dir);
      const [a, b] = [newJobFor(queue), newJobFor(queue)];
      const first = store.jobCreateMany({ items: [a], nowMs: 1 });
      store.writes.flush(); // committed; its sync is held open
      const second = store.jobCreateMany({ items: [b], nowMs: 1 });
      store.writes.flush(); // committed behind it: it needs the next sync
      const listed = async (): Promise<string[]> => (await store.jobEventList({ afterId: 0, limit: 10 })).map((e) => e.jobId);
      expect(await listed()).toEqual([]);
      held.release();
      await first;
      expect(await listed()).toEqual([a.job.id]);
      held.release();
      await second;
      expect(await listed()).toEqual([a.job.id, b.job.id]);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a client-visible read of a committed but not yet synced write waits for the sync", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-walsync-"));
    try {
      const { held, store, queue } = await heldStoreWithQueue(dir);
      const sent = messageSend(store, {
        queueId: queue.id,
        messages: [{ messageId: "m1", body: "hello", attributes: {}, systemAttributes: {}, bodyMd5: "x", sentAtMs: 1, visibleAtMs: 1, priority: 0, senderId: "s" }],
      });
      store.writes.flush(); // committed; its sync is held open
      let statsDone = false;
      const stats = store.queueStats({ queueId: queue.id, nowMs: 2, minSentAtMs: 0 }).then((s) => ((statsDone = true), s));
      await settle();
      expect(statsDone).toBe(false);
      held.release();
      expect((await stats).visible).toBe(1);
      await sent;
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
