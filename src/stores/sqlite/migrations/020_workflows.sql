-- Workflows (docs/jobs-api.md): schedules, the durable job event log, job dependencies, tenants
-- and lease limits.

-- A schedule's record is core's ScheduleRecord as JSON; name, version and next run are columns
-- because writes compare-and-set on the version and the scheduler looks the due ones up.
CREATE TABLE schedules (
  name           TEXT    PRIMARY KEY,
  version        INTEGER NOT NULL,
  next_run_at_ms INTEGER,            -- NULL while paused, or when no run will come
  record         TEXT    NOT NULL
) WITHOUT ROWID;
CREATE INDEX schedules_due ON schedules (next_run_at_ms) WHERE next_run_at_ms IS NOT NULL;

-- The durable job event log: every event of every job transition, appended in the transition's
-- transaction. AUTOINCREMENT: ids are never reused, not even after the newest rows are pruned,
-- so a reader resuming from an id can never be handed an older event under a newer number.
CREATE TABLE job_events (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms      INTEGER NOT NULL,
  queue_name TEXT    NOT NULL,
  job_id     TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  job        TEXT    NOT NULL  -- the job at the event, without its input (core: eventSnapshotJson)
);
-- Every id up to this one has been pruned: a reader resuming below it missed events.
CREATE TABLE job_event_floor (
  id                INTEGER PRIMARY KEY CHECK (id = 1),
  pruned_through_id INTEGER NOT NULL
);
INSERT INTO job_event_floor (id, pruned_through_id) VALUES (1, 0);

-- Tenants (fair sharing, per-tenant caps: the job message's group is its tenant) and dependencies.
ALTER TABLE jobs ADD COLUMN tenant TEXT;
ALTER TABLE jobs ADD COLUMN depends_on TEXT;         -- JSON array of parent job ids
ALTER TABLE jobs ADD COLUMN on_parent_failure TEXT;  -- fail | ignore
-- Running jobs per tenant (maxRunningPerTenant): only jobs with a tenant are in it.
CREATE INDEX jobs_running_tenant ON jobs (queue_id, tenant) WHERE status = 'running' AND tenant IS NOT NULL;
-- Who waits for whom: read when a parent finishes (its children may go), and to keep a parent
-- whose children still need its output from being pruned. No foreign keys: a parent submitted
-- in the same group commit as its child may not have its row yet; a trigger cleans up instead.
CREATE TABLE job_dependencies (
  parent_id TEXT NOT NULL,
  child_id  TEXT NOT NULL,
  PRIMARY KEY (parent_id, child_id)
) WITHOUT ROWID;
CREATE INDEX job_dependencies_child ON job_dependencies (child_id);
CREATE TRIGGER job_dependencies_job_deleted AFTER DELETE ON jobs
BEGIN
  DELETE FROM job_dependencies WHERE parent_id = OLD.id;
  DELETE FROM job_dependencies WHERE child_id = OLD.id;
END;

-- Lease rate limits (rateLimitPerSecond): each queue's token bucket, read and written by leases.
CREATE TABLE job_queue_buckets (
  queue_id INTEGER PRIMARY KEY REFERENCES queues(id) ON DELETE CASCADE,
  tokens   REAL    NOT NULL,
  at_ms    INTEGER NOT NULL
);
