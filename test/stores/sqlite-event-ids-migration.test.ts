/**
 * Migration 030 (the event log's ids handed out by the store, not AUTOINCREMENT) on a database
 * written before it: every event is kept under its id, and a new event's id is above every id the
 * log ever used — also when pruning had taken every event, so that only the floor remembers them.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { migrate, migrationsDir } from "../../src/stores/sqlite/migrate.js";
import { openSqliteStore } from "../../src/stores/sqlite/sqlite-store.js";
import { jobCaseKit } from "../../src/stores/testkit/conformance-jobs-kit.js";
import type { Store } from "../../src/core/store.js";

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A database file at the migrations before 030, with `events` appended and the first `pruned` of them pruned. */
function databaseBefore030(events: number, pruned: number): string {
  const root = mkdtempSync(join(tmpdir(), "sluice-event-ids-"));
  dirs.push(root);
  const migrations = join(root, "migrations");
  mkdirSync(migrations);
  for (const file of readdirSync(migrationsDir()).filter((f) => /^\d+_.+\.sql$/.test(f) && Number.parseInt(f, 10) < 30)) {
    copyFileSync(join(migrationsDir(), file), join(migrations, file));
  }
  const filename = join(root, "sluice.db");
  const db = new Database(filename);
  migrate(db, migrations);
  const append = db.prepare("INSERT INTO job_events (at_ms, queue_name, job_id, type, job, account) VALUES (?, 'q', ?, 'job.queued', '{\"status\":\"queued\"}', '')");
  for (let i = 1; i <= events; i++) append.run(i, `job-${i}`);
  if (pruned > 0) {
    db.prepare("DELETE FROM job_events WHERE id <= ?").run(pruned);
    db.prepare("UPDATE job_event_floor SET pruned_through_id = ?").run(pruned);
  }
  db.close();
  return filename;
}

async function open(filename: string): Promise<Store> {
  const store = openSqliteStore({ filename });
  stores.push(store);
  return store;
}

describe("migration 030: event ids without AUTOINCREMENT", () => {
  it("keeps every event under its id, and appends above them", async () => {
    const store = await open(databaseBefore030(3, 1));
    expect(await store.jobEventBounds()).toEqual({ headId: 3, floorId: 1 });
    expect((await store.jobEventList({ afterId: 0, limit: 10 })).map((e) => [e.id, e.jobId])).toEqual([
      [2, "job-2"],
      [3, "job-3"],
    ]);
    const kit = jobCaseKit(() => store);
    const { job } = await kit.submit(await kit.makeQueue());
    expect((await store.jobEventList({ afterId: 3, limit: 10 })).map((e) => [e.id, e.jobId])).toEqual([[4, job.id]]);
  });

  it("after every event was pruned, a new event's id is above the floor, and after a reopen too", async () => {
    const filename = databaseBefore030(5, 5);
    let store = await open(filename);
    expect(await store.jobEventBounds()).toEqual({ headId: 5, floorId: 5 });
    const kit = jobCaseKit(() => store);
    const queue = await kit.makeQueue();
    await kit.submit(queue);
    expect((await store.jobEventList({ afterId: 0, limit: 10 })).map((e) => e.id)).toEqual([6]);
    expect(await store.jobEventPrune({ beforeAtMs: Number.MAX_SAFE_INTEGER, limit: 10 })).toBe(1);
    await stores.pop()!.close();
    store = await open(filename);
    expect(await store.jobEventBounds()).toEqual({ headId: 6, floorId: 6 });
    await kit.submit(queue);
    expect((await store.jobEventList({ afterId: 0, limit: 10 })).map((e) => e.id)).toEqual([7]);
  });
});
