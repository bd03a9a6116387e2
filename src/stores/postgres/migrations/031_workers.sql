-- Workers you can see (GET /v1/workers): each node's latest sighting of a worker on a queue,
-- written at most once a second per row (core's worker-registry.ts), read by every node.
CREATE TABLE workers (
  account         text    NOT NULL,
  worker_id       text    NOT NULL,
  queue_name      text    NOT NULL,
  node_id         text    NOT NULL,
  labels          text,
  running         integer NOT NULL,
  last_seen_at_ms bigint  NOT NULL,
  PRIMARY KEY (account, worker_id, queue_name, node_id)
);
CREATE INDEX workers_seen ON workers (account, last_seen_at_ms);
CREATE INDEX workers_prune ON workers (last_seen_at_ms);
