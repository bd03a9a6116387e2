-- Per-tenant lease rate limits (rateLimitPerTenantPerSecond): a token bucket per tenant of a
-- queue, read and written by leases. A row idle long enough to be full again is deleted: no row
-- and a full bucket mean the same.
CREATE TABLE job_tenant_buckets (
  queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
  tenant   TEXT    NOT NULL,
  tokens   REAL    NOT NULL,
  at_ms    INTEGER NOT NULL,
  PRIMARY KEY (queue_id, tenant)
) WITHOUT ROWID;
