-- Workflows (docs/jobs-api.md): schedules and the durable job event log.

-- A schedule's record is core's ScheduleRecord as JSON; name, version and next run are columns
-- because writes compare-and-set on the version (one node wins each run) and the scheduler
-- looks the due ones up.
CREATE TABLE schedules (
  name           text   PRIMARY KEY,
  version        bigint NOT NULL,
  next_run_at_ms bigint,            -- NULL while paused, or when no run will come
  record         text   NOT NULL
);
CREATE INDEX schedules_due ON schedules (next_run_at_ms) WHERE next_run_at_ms IS NOT NULL;

-- The durable job event log. Ids come from the sequence, taken under a transaction-level
-- advisory lock held to commit (event-log.ts), so they commit in id order: a reader that has
-- seen id N never sees an id below N appear later.
CREATE TABLE job_events (
  id         bigserial PRIMARY KEY,
  at_ms      bigint NOT NULL,
  queue_name text   NOT NULL,
  job_id     text   NOT NULL,
  type       text   NOT NULL,
  job        text   NOT NULL  -- the job at the event, without its input (core: eventSnapshotJson)
);
-- Every id up to this one has been pruned (retention).
CREATE TABLE job_event_floor (
  id                integer PRIMARY KEY CHECK (id = 1),
  pruned_through_id bigint  NOT NULL
);
INSERT INTO job_event_floor (id, pruned_through_id) VALUES (1, 0);
