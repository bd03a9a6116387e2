/** The workers table on PostgreSQL (core's worker-store.ts): every node writes its own rows, and reads all. */
import type { WorkerSighting, WorkerStore } from "../../core/worker-store.js";
import { type WorkerRow, toWorker, workerColumns, workerValues } from "../codecs/worker-row.js";
import type { Db } from "./db.js";

export class PostgresWorkers implements WorkerStore {
  constructor(private readonly db: Db) {}

  async workerUpsertMany(p: { rows: WorkerSighting[] }): Promise<void> {
    if (p.rows.length === 0) return;
    const rows = p.rows.map(workerValues);
    await this.db.query(
      `INSERT INTO workers (${workerColumns})
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[])
       ON CONFLICT (account, worker_id, queue_name, node_id) DO UPDATE SET labels = excluded.labels, running = excluded.running, last_seen_at_ms = excluded.last_seen_at_ms`,
      rows[0]!.map((_, column) => rows.map((row) => row[column])), // one array per column
    );
  }

  async workerList(p: { account: string; sinceMs: number; limit: number }): Promise<WorkerSighting[]> {
    const { rows } = await this.db.query<WorkerRow>(
      `SELECT ${workerColumns} FROM workers WHERE account = $1 AND last_seen_at_ms >= $2 ORDER BY worker_id, queue_name LIMIT $3`,
      [p.account, p.sinceMs, p.limit],
    );
    return rows.map(toWorker);
  }

  async workerPrune(p: { beforeMs: number; limit: number }): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM workers WHERE (account, worker_id, queue_name, node_id) IN
         (SELECT account, worker_id, queue_name, node_id FROM workers WHERE last_seen_at_ms < $1 LIMIT $2)`,
      [p.beforeMs, p.limit],
    );
    return rowCount ?? 0;
  }
}
