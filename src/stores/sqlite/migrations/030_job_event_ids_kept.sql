-- rebuilds: job_events
-- The event log without AUTOINCREMENT, which wrote sqlite_sequence on every append. Ids must
-- still never be reused (a reader resuming from an id must never be handed an older event under a
-- newer number), so the store hands them out itself (event-log.ts): each transaction starts above
-- the highest id ever used, which is max(the newest row's id, the pruned floor) — pruning deletes
-- only the oldest prefix and records its last id in the floor. That is also AUTOINCREMENT's last
-- value for this table (its sequence is dropped with it), so the rebuild keeps every id in order.
CREATE TABLE job_events_new (
  id         INTEGER PRIMARY KEY,
  at_ms      INTEGER NOT NULL,
  queue_name TEXT    NOT NULL,
  job_id     TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  job        TEXT    NOT NULL, -- the job at the event, without its input (core: eventSnapshotJson)
  account    TEXT    NOT NULL DEFAULT ''
);
INSERT INTO job_events_new (id, at_ms, queue_name, job_id, type, job, account) SELECT id, at_ms, queue_name, job_id, type, job, account FROM job_events;
DROP TABLE job_events;
ALTER TABLE job_events_new RENAME TO job_events;
