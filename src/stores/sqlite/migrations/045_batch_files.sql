-- The OpenAI-compatible Batch API: files kept in the store in chunks (every node reads what
-- another stored), batches as records with a version for compare-and-set, and each batch line's job.
CREATE TABLE files (
  id      TEXT    PRIMARY KEY,
  account TEXT    NOT NULL,
  record  TEXT    NOT NULL -- core's FileRecord as JSON
) WITHOUT ROWID;
CREATE TABLE file_chunks (
  file_id TEXT    NOT NULL,
  idx     INTEGER NOT NULL,
  data    BLOB    NOT NULL,
  PRIMARY KEY (file_id, idx)
) WITHOUT ROWID;
CREATE TABLE batches (
  seq     INTEGER PRIMARY KEY AUTOINCREMENT, -- list order
  id      TEXT    NOT NULL UNIQUE,
  account TEXT    NOT NULL,
  version INTEGER NOT NULL,
  active  INTEGER NOT NULL, -- 1 until the batch is done
  record  TEXT    NOT NULL  -- core's BatchRecord as JSON
);
CREATE INDEX batches_account ON batches (account, seq);
CREATE INDEX batches_active ON batches (seq) WHERE active = 1;
CREATE TABLE batch_jobs (
  batch_id  TEXT    NOT NULL,
  line      INTEGER NOT NULL,
  custom_id TEXT    NOT NULL,
  job_id    TEXT    NOT NULL,
  PRIMARY KEY (batch_id, line)
) WITHOUT ROWID;
