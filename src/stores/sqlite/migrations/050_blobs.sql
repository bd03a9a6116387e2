-- Attachments: each blob's record (its bytes are the blob storage's, fs or S3), and the job
-- columns that name a job's attachments. A blob is due for the sweep at expires_at_ms (NULL: held
-- by its job); deleting the job (pruned, or with its queue) makes its blobs due at once.
CREATE TABLE blobs (
  id             TEXT    PRIMARY KEY,
  account        TEXT    NOT NULL,
  content_type   TEXT    NOT NULL,
  created_at_ms  INTEGER NOT NULL,
  uploaded_at_ms INTEGER,
  size           INTEGER,
  sha256         TEXT,
  job_id         TEXT,
  expires_at_ms  INTEGER
) WITHOUT ROWID;
CREATE INDEX blobs_due ON blobs (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
CREATE INDEX blobs_of_job ON blobs (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX blobs_of_account ON blobs (account, size);
ALTER TABLE jobs ADD COLUMN attachments TEXT;
ALTER TABLE jobs ADD COLUMN output_attachments TEXT;
CREATE TRIGGER jobs_release_blobs AFTER DELETE ON jobs
  WHEN OLD.attachments IS NOT NULL OR OLD.output_attachments IS NOT NULL
BEGIN
  UPDATE blobs SET job_id = NULL, expires_at_ms = 0 WHERE job_id = OLD.id;
END;
