-- Outbox rows no longer die with their job. Under 010 they were `ON DELETE CASCADE` from jobs,
-- so deleting a job queue (queues → jobs → outbox) silently dropped deliveries still pending,
-- though the docs promise at-least-once delivery from a durable outbox. Each row carries its own
-- snapshot of the job (job_snapshot), so it can be delivered without the job's row.
--
-- SQLite cannot drop a foreign key in place: the table is rebuilt (create new, copy, drop,
-- rename) and its indexes recreated. Nothing references webhook_outbox, so this is safe with
-- foreign_keys on, inside the migration's transaction.
CREATE TABLE webhook_outbox_new (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT    NOT NULL UNIQUE, -- the webhook-id header
  job_id             TEXT    NOT NULL,        -- no foreign key: the row outlives its job (above)
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
INSERT INTO webhook_outbox_new (seq, id, job_id, event, url, job_snapshot, status, attempts, created_at_ms,
                                next_attempt_at_ms, last_attempt_at_ms, last_status_code, last_error, delivered_at_ms)
  SELECT seq, id, job_id, event, url, job_snapshot, status, attempts, created_at_ms,
         next_attempt_at_ms, last_attempt_at_ms, last_status_code, last_error, delivered_at_ms
  FROM webhook_outbox;
-- seq is never reused: the new table takes over the old one's AUTOINCREMENT high-water mark,
-- which is above max(seq) when the newest rows were deleted (the copy alone would set max(seq)).
-- DROP removes the old table's sqlite_sequence row and RENAME renames the new one's.
DELETE FROM sqlite_sequence WHERE name = 'webhook_outbox_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'webhook_outbox_new', seq FROM sqlite_sequence WHERE name = 'webhook_outbox';
DROP TABLE webhook_outbox;
ALTER TABLE webhook_outbox_new RENAME TO webhook_outbox;
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at_ms) WHERE status = 'pending';
CREATE INDEX webhook_outbox_job ON webhook_outbox (job_id, seq);

-- What the cascade did that is still wanted: when a job is deleted (pruned after its result TTL,
-- which waits for its pending deliveries; or with its queue), its finished deliveries go with it.
-- Pending ones stay to be delivered; the outbox store deletes them once they finish, as their
-- job is gone (webhook-outbox-store.ts).
CREATE TRIGGER webhook_outbox_job_deleted AFTER DELETE ON jobs
BEGIN
  DELETE FROM webhook_outbox WHERE job_id = OLD.id AND status <> 'pending';
END;
