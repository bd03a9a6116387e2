-- Job dependencies, tenants and start limits (docs/jobs-api.md) on PostgreSQL.

-- Tenants (fair sharing, per-tenant caps: a tenant's job messages are its message group) and
-- dependencies, as columns of the job.
ALTER TABLE jobs ADD COLUMN tenant text;
ALTER TABLE jobs ADD COLUMN depends_on text;         -- JSON array of parent job ids
ALTER TABLE jobs ADD COLUMN on_parent_failure text;  -- fail | ignore
-- Running jobs per tenant (maxRunningPerTenant): only jobs with a tenant are in it.
CREATE INDEX jobs_running_tenant ON jobs (queue_id, tenant) WHERE status = 'running' AND tenant IS NOT NULL;

-- Who waits for whom: read when a parent finishes (its children may go), and to keep a parent
-- whose children still need its output from being pruned. A child's rows go with either job.
CREATE TABLE job_dependencies (
  parent_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  child_id  text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  PRIMARY KEY (parent_id, child_id)
);
CREATE INDEX job_dependencies_child ON job_dependencies (child_id);

-- Lease rate limits (rateLimitPerSecond): each queue's token bucket, shared by every node, read
-- and written by leases under the queue's lease lock (limited-lease.ts).
CREATE TABLE job_queue_buckets (
  queue_id bigint           PRIMARY KEY REFERENCES queues (id) ON DELETE CASCADE,
  tokens   double precision NOT NULL,
  at_ms    bigint           NOT NULL
);
