/** The workers table on PostgreSQL (core's worker-store.ts): every node writes its own rows, and reads all. */
import type { WorkerSighting, WorkerStore } from "../../core/worker-store.js";
import type { Db } from "./db.js";

interface Row {
  account: string;
  worker_id: string;
  queue_name: string;
  node_id: string;
  labels: string | null;
  running: number;
  last_seen_at_ms: number;
}

export class PostgresWorkers implements WorkerStore {
  constructor(private readonly db: Db) {}

  async workerUpsertMany(p: { rows: WorkerSighting[] }): Promise<void> {
    if (p.rows.length === 0) return;
    const rows = p.rows;
    await this.db.query(
      `INSERT INTO workers (account, worker_id, queue_name, node_id, labels, running, last_seen_at_ms)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[])
       ON CONFLICT (account, worker_id, queue_name, node_id) DO UPDATE SET labels = excluded.labels, running = excluded.running, last_seen_at_ms = excluded.last_seen_at_ms`,
      [
        rows.map((r) => r.account),
        rows.map((r) => r.workerId),
        rows.map((r) => r.queueName),
        rows.map((r) => r.nodeId),
        rows.map((r) => r.labelsJson ?? null),
        rows.map((r) => r.running),
        rows.map((r) => r.lastSeenAtMs),
      ],
    );
  }

  async workerList(p: { account: string; sinceMs: number; limit: number }): Promise<WorkerSighting[]> {
    const { rows } = await this.db.query<Row>(
      `SELECT account, worker_id, queue_name, node_id, labels, running, last_seen_at_ms FROM workers
       WHERE account = $1 AND last_seen_at_ms >= $2 ORDER BY worker_id, queue_name LIMIT $3`,
      [p.account, p.sinceMs, p.limit],
    );
    return rows.map((r) => ({
      account: r.account,
      workerId: r.worker_id,
      queueName: r.queue_name,
      nodeId: r.node_id,
      ...(r.labels === null ? {} : { labelsJson: r.labels }),
      running: r.running,
      lastSeenAtMs: Number(r.last_seen_at_ms),
    }));
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
