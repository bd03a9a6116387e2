-- Attachments: each blob's record (its bytes are the blob storage's, fs or S3), and the job
-- columns that name a job's attachments. A blob is due for the sweep at expires_at_ms (NULL: held
-- by its job); deleting the job (pruned, or with its queue) makes its blobs due at once.
CREATE TABLE blobs (
  id             text   PRIMARY KEY,
  account        text   NOT NULL,
  content_type   text   NOT NULL,
  created_at_ms  bigint NOT NULL,
  uploaded_at_ms bigint,
  size           bigint,
  sha256         text,
  job_id         text,
  expires_at_ms  bigint
);
CREATE INDEX blobs_due ON blobs (expires_at_ms) WHERE expires_at_ms IS NOT NULL;
CREATE INDEX blobs_of_job ON blobs (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX blobs_of_account ON blobs (account, size);
ALTER TABLE jobs ADD COLUMN attachments text;
ALTER TABLE jobs ADD COLUMN output_attachments text;
CREATE FUNCTION jobs_release_blobs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE blobs SET job_id = NULL, expires_at_ms = 0 WHERE job_id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER jobs_release_blobs AFTER DELETE ON jobs FOR EACH ROW
  WHEN (OLD.attachments IS NOT NULL OR OLD.output_attachments IS NOT NULL)
  EXECUTE FUNCTION jobs_release_blobs();
