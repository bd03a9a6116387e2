/** The workers table in SQLite (core's worker-store.ts): sightings written through the group committer. */
import type Database from "better-sqlite3";
import type { WorkerSighting, WorkerStore } from "../../core/worker-store.js";
import { type WorkerRow, toWorker, workerColumns, workerValues } from "../codecs/worker-row.js";
import { boundLimit } from "./bound-limit.js";
import type { GroupCommitter } from "./group-commit.js";

export class SqliteWorkers implements WorkerStore {
  private readonly sql;

  constructor(
    db: Database.Database,
    private readonly writes: GroupCommitter,
  ) {
    this.sql = {
      upsert: db.prepare<ReturnType<typeof workerValues>>(
        `INSERT INTO workers (${workerColumns}) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account, worker_id, queue_name, node_id) DO UPDATE SET labels = excluded.labels, running = excluded.running, last_seen_at_ms = excluded.last_seen_at_ms`,
      ),
      list: db.prepare<[string, number, number], WorkerRow>(
        `SELECT ${workerColumns} FROM workers INDEXED BY workers_seen WHERE account = ? AND last_seen_at_ms >= ? ORDER BY worker_id, queue_name ${boundLimit()}`,
      ),
      prune: db.prepare<[number, number]>(
        `DELETE FROM workers WHERE (account, worker_id, queue_name, node_id) IN
           (SELECT account, worker_id, queue_name, node_id FROM workers INDEXED BY workers_prune WHERE last_seen_at_ms < ? ${boundLimit()})`,
      ),
    };
  }

  async workerUpsertMany(p: { rows: WorkerSighting[] }): Promise<void> {
    await this.writes.run(() => {
      for (const r of p.rows) this.sql.upsert.run(...workerValues(r));
    });
  }

  async workerList(p: { account: string; sinceMs: number; limit: number }): Promise<WorkerSighting[]> {
    return this.sql.list.all(p.account, p.sinceMs, p.limit).map(toWorker);
  }

  async workerPrune(p: { beforeMs: number; limit: number }): Promise<number> {
    return this.writes.run(() => this.sql.prune.run(p.beforeMs, p.limit).changes);
  }
}
