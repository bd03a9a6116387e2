/** The `workers` table's rows, as both stores write and read them, and their mapping to core's WorkerSighting. */
import type { WorkerSighting } from "../../core/worker-store.js";

export const workerColumns = "account, worker_id, queue_name, node_id, labels, running, last_seen_at_ms";

/** A row as read; PostgreSQL's bigint arrives as text. */
export interface WorkerRow {
  account: string;
  worker_id: string;
  queue_name: string;
  node_id: string;
  labels: string | null;
  running: number;
  last_seen_at_ms: number | string;
}

/** A sighting's values, in workerColumns' order. */
export function workerValues(r: WorkerSighting): [string, string, string, string, string | null, number, number] {
  return [r.account, r.workerId, r.queueName, r.nodeId, r.labelsJson ?? null, r.running, r.lastSeenAtMs];
}

export function toWorker(r: WorkerRow): WorkerSighting {
  const labels = r.labels === null ? {} : { labelsJson: r.labels };
  return { account: r.account, workerId: r.worker_id, queueName: r.queue_name, nodeId: r.node_id, ...labels, running: r.running, lastSeenAtMs: Number(r.last_seen_at_ms) };
}
