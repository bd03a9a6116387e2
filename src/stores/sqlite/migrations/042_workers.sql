-- Workers you can see (GET /v1/workers): each node's latest sighting of a worker on a queue,
-- written at most once a second per row (core's worker-registry.ts), read by every node.
CREATE TABLE workers (
  account         TEXT    NOT NULL,
  worker_id       TEXT    NOT NULL,
  queue_name      TEXT    NOT NULL,
  node_id         TEXT    NOT NULL,
  labels          TEXT,             -- JSON object
  running         INTEGER NOT NULL,
  last_seen_at_ms INTEGER NOT NULL,
  PRIMARY KEY (account, worker_id, queue_name, node_id)
) WITHOUT ROWID;
CREATE INDEX workers_seen ON workers (account, last_seen_at_ms);
CREATE INDEX workers_prune ON workers (last_seen_at_ms);
