-- Running jobs per queue and per tenant, for the lease limits (maxRunning, maxRunningPerTenant):
-- a lease reads one row instead of counting the running jobs. A row is made by the first limited
-- lease that needs it (counting once, in its write) and from then on kept by the triggers below,
-- in the transaction of every change to a job: a row that exists is always the true count, also
-- after a crash. Queues nobody limits have no rows, and their jobs' changes update nothing.
CREATE TABLE job_queue_running (
  queue_id INTEGER PRIMARY KEY REFERENCES queues(id) ON DELETE CASCADE,
  running  INTEGER NOT NULL
);
CREATE TABLE job_tenant_running (
  queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
  tenant   TEXT    NOT NULL,
  running  INTEGER NOT NULL,
  PRIMARY KEY (queue_id, tenant)
) WITHOUT ROWID;

-- A job starts counting when it becomes running (or is written running), and stops when it
-- stops running or is deleted. A heartbeat or progress update of a running job fires neither.
CREATE TRIGGER job_running_counts_insert AFTER INSERT ON jobs WHEN NEW.status = 'running'
BEGIN
  UPDATE job_queue_running SET running = running + 1 WHERE queue_id = NEW.queue_id;
  UPDATE job_tenant_running SET running = running + 1 WHERE queue_id = NEW.queue_id AND tenant = NEW.tenant;
END;
CREATE TRIGGER job_running_counts_start AFTER UPDATE ON jobs
  WHEN NEW.status = 'running' AND (OLD.status IS NOT 'running' OR OLD.queue_id IS NOT NEW.queue_id OR OLD.tenant IS NOT NEW.tenant)
BEGIN
  UPDATE job_queue_running SET running = running + 1 WHERE queue_id = NEW.queue_id;
  UPDATE job_tenant_running SET running = running + 1 WHERE queue_id = NEW.queue_id AND tenant = NEW.tenant;
END;
CREATE TRIGGER job_running_counts_stop AFTER UPDATE ON jobs
  WHEN OLD.status = 'running' AND (NEW.status IS NOT 'running' OR OLD.queue_id IS NOT NEW.queue_id OR OLD.tenant IS NOT NEW.tenant)
BEGIN
  UPDATE job_queue_running SET running = running - 1 WHERE queue_id = OLD.queue_id;
  UPDATE job_tenant_running SET running = running - 1 WHERE queue_id = OLD.queue_id AND tenant = OLD.tenant;
END;
CREATE TRIGGER job_running_counts_delete AFTER DELETE ON jobs WHEN OLD.status = 'running'
BEGIN
  UPDATE job_queue_running SET running = running - 1 WHERE queue_id = OLD.queue_id;
  UPDATE job_tenant_running SET running = running - 1 WHERE queue_id = OLD.queue_id AND tenant = OLD.tenant;
END;
