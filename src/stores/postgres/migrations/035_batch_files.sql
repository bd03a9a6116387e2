-- The OpenAI-compatible Batch API: files kept in the database in chunks (every node reads what
-- another stored), batches as records with a version for compare-and-set, and each batch line's job.
CREATE TABLE files (
  id      text PRIMARY KEY,
  account text NOT NULL,
  record  text NOT NULL -- core's FileRecord as JSON
);
CREATE TABLE file_chunks (
  file_id text    NOT NULL,
  idx     integer NOT NULL,
  data    bytea   NOT NULL,
  PRIMARY KEY (file_id, idx)
);
CREATE TABLE batches (
  seq     bigserial PRIMARY KEY, -- list order
  id      text    NOT NULL UNIQUE,
  account text    NOT NULL,
  version integer NOT NULL,
  active  boolean NOT NULL, -- true until the batch is done
  record  text    NOT NULL  -- core's BatchRecord as JSON
);
CREATE INDEX batches_account ON batches (account, seq);
CREATE INDEX batches_active ON batches (seq) WHERE active;
CREATE TABLE batch_jobs (
  batch_id  text    NOT NULL,
  line      integer NOT NULL,
  custom_id text    NOT NULL,
  job_id    text    NOT NULL,
  PRIMARY KEY (batch_id, line)
);
