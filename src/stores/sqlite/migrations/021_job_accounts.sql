-- Jobs, their events and schedules belong to an account, as their queues do (016): '' is the
-- server's own account, which keeps every job, event and schedule made before this migration.
-- A job's account is its queue's, written when it is created; the event log keeps it per event so
-- an account's event stream reads only its own events, and a schedule's name is unique within
-- its account.
ALTER TABLE jobs ADD COLUMN account TEXT NOT NULL DEFAULT '';
ALTER TABLE job_events ADD COLUMN account TEXT NOT NULL DEFAULT '';

-- The schedules table is keyed by name alone: rebuilt with (account, name). Nothing references it.
CREATE TABLE schedules_new (
  account        TEXT    NOT NULL DEFAULT '',
  name           TEXT    NOT NULL,
  version        INTEGER NOT NULL,
  next_run_at_ms INTEGER,            -- NULL while paused, or when no run will come
  record         TEXT    NOT NULL,
  PRIMARY KEY (account, name)
) WITHOUT ROWID;
INSERT INTO schedules_new (account, name, version, next_run_at_ms, record) SELECT '', name, version, next_run_at_ms, record FROM schedules;
DROP TABLE schedules;
ALTER TABLE schedules_new RENAME TO schedules;
CREATE INDEX schedules_due ON schedules (next_run_at_ms) WHERE next_run_at_ms IS NOT NULL;
