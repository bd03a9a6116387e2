/**
 * The store methods behind GET /v1/workers: a small table of worker sightings, one row per
 * (account, worker, queue, node), written by each node about the leases it answered (at most once
 * a second per row: worker-registry.ts keeps them off the lease path) and read by every node.
 */

/** One node's view of one worker on one queue. */
export interface WorkerSighting {
  /** The queue's account ("" for the server's own). */
  account: string;
  workerId: string;
  queueName: string;
  /** The node that answered the worker's leases (each node writes only its own rows). */
  nodeId: string;
  /** The worker's labels as JSON (an object), or undefined for none. */
  labelsJson?: string;
  /** Jobs this node leased to the worker that are still running. */
  running: number;
  lastSeenAtMs: number;
}

export interface WorkerStore {
  /** Inserts or replaces each row (by account, worker, queue and node), in one write. */
  workerUpsertMany(p: { rows: WorkerSighting[] }): Promise<void>;
  /** The account's rows seen at or after `sinceMs`, by worker id then queue, at most `limit`. */
  workerList(p: { account: string; sinceMs: number; limit: number }): Promise<WorkerSighting[]>;
  /** Deletes up to `limit` rows last seen before `beforeMs`; answers how many. */
  workerPrune(p: { beforeMs: number; limit: number }): Promise<number>;
}
