-- Jobs (docs/jobs-api.md). A job's message lives in `messages` (message_id = job id, body = input);
-- this row is the job's state, result and history. Both change in the same transaction.
CREATE TABLE jobs (
  seq                 INTEGER PRIMARY KEY AUTOINCREMENT, -- list order and cursor
  id                  TEXT    NOT NULL UNIQUE,
  queue_id            INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
  queue_name          TEXT    NOT NULL,
  status              TEXT    NOT NULL, -- queued | running | succeeded | failed | canceled
  input               TEXT    NOT NULL, -- JSON
  output              TEXT,             -- JSON
  error               TEXT,             -- JSON {message, type?}
  attempt             INTEGER NOT NULL,
  max_attempts        INTEGER NOT NULL,
  priority            INTEGER NOT NULL,
  progress            REAL,
  created_at_ms       INTEGER NOT NULL,
  started_at_ms       INTEGER,
  finished_at_ms      INTEGER,
  updated_at_ms       INTEGER NOT NULL,
  idempotency_key     TEXT,
  metadata            TEXT,             -- JSON object
  timeout_seconds     INTEGER,
  webhook             TEXT,             -- JSON {url, events}
  cancel_requested    INTEGER NOT NULL DEFAULT 0,
  lease_token         TEXT,
  lease_seconds       INTEGER,
  lease_expires_at_ms INTEGER,
  deadline_at_ms      INTEGER,
  available_at_ms     INTEGER,
  expires_at_ms       INTEGER,          -- finished jobs: when they are pruned
  message_seq         INTEGER
);
CREATE INDEX jobs_queue ON jobs (queue_id, seq);
CREATE INDEX jobs_queue_status ON jobs (queue_id, status, seq);
-- The expiry sweep finds running jobs whose lease ended or whose attempt timed out.
CREATE INDEX jobs_running_lease ON jobs (lease_expires_at_ms) WHERE status = 'running';
CREATE INDEX jobs_running_deadline ON jobs (deadline_at_ms) WHERE status = 'running' AND deadline_at_ms IS NOT NULL;
CREATE INDEX jobs_expiry ON jobs (expires_at_ms) WHERE expires_at_ms IS NOT NULL;

-- Idempotency-Key claims, per queue, kept 24 h by default.
CREATE TABLE job_idempotency_keys (
  queue_id      INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
  key           TEXT    NOT NULL,
  fingerprint   TEXT    NOT NULL,
  job_id        TEXT    NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  PRIMARY KEY (queue_id, key)
) WITHOUT ROWID;
CREATE INDEX job_idempotency_keys_expiry ON job_idempotency_keys (expires_at_ms);

CREATE TABLE job_queue_settings (
  queue_id      INTEGER PRIMARY KEY REFERENCES queues(id) ON DELETE CASCADE,
  settings      TEXT    NOT NULL, -- JSON of core JobQueueSettings
  updated_at_ms INTEGER NOT NULL
);

-- The webhook outbox: written in the transaction of the job transition it reports, delivered
-- (at least once) by the dispatcher, which claims due rows by pushing next_attempt_at_ms ahead.
CREATE TABLE webhook_outbox (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT    NOT NULL UNIQUE, -- the webhook-id header
  job_id             TEXT    NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  event              TEXT    NOT NULL,
  url                TEXT    NOT NULL,
  job_snapshot       TEXT    NOT NULL, -- JSON of the job at the event
  status             TEXT    NOT NULL, -- pending | delivered | failed
  attempts           INTEGER NOT NULL DEFAULT 0,
  created_at_ms      INTEGER NOT NULL,
  next_attempt_at_ms INTEGER,
  last_attempt_at_ms INTEGER,
  last_status_code   INTEGER,
  last_error         TEXT,
  delivered_at_ms    INTEGER
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at_ms) WHERE status = 'pending';
CREATE INDEX webhook_outbox_job ON webhook_outbox (job_id, seq);
