-- Per-tenant lease rate limits (rateLimitPerTenantPerSecond): a token bucket per tenant of a
-- queue, shared by every node, read and written by leases under the queue's lease lock. A row
-- idle long enough to be full again is deleted: no row and a full bucket mean the same.
CREATE TABLE job_tenant_buckets (
  queue_id bigint           NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
  tenant   text             NOT NULL,
  tokens   double precision NOT NULL,
  at_ms    bigint           NOT NULL,
  PRIMARY KEY (queue_id, tenant)
);
