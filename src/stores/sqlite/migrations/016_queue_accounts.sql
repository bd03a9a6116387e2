-- rebuilds: queues, queue_tombstones
-- Queues belong to an account: a name is unique within its account, not across the server, so
-- two accounts can each have an `orders` queue. '' is the server's own account (--account-id);
-- every queue made before this migration is its, so existing queue URLs keep working.
--
-- SQLite cannot drop the UNIQUE (name) in place: the table is rebuilt (create, copy, drop,
-- rename). The first line above has the migration runner turn foreign keys off for this file and
-- check them before it commits (with them on, dropping the old table would delete the messages
-- and jobs that reference it), and put back the triggers that other migrations put on it.
CREATE TABLE queues_new (
  id            INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: receipt handles name the queue
  account       TEXT    NOT NULL DEFAULT '',
  name          TEXT    NOT NULL,
  config        TEXT    NOT NULL, -- JSON of core QueueConfig
  tags          TEXT    NOT NULL, -- JSON object
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  purged_at_ms  INTEGER,
  UNIQUE (account, name)
);
INSERT INTO queues_new (id, account, name, config, tags, created_at_ms, updated_at_ms, purged_at_ms)
  SELECT id, '', name, config, tags, created_at_ms, updated_at_ms, purged_at_ms FROM queues;
-- Ids are never reused: the new table takes over the old one's AUTOINCREMENT high-water mark.
DELETE FROM sqlite_sequence WHERE name = 'queues_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'queues_new', seq FROM sqlite_sequence WHERE name = 'queues';
DROP TABLE queues;
ALTER TABLE queues_new RENAME TO queues;

CREATE TABLE queue_tombstones_new (
  account       TEXT    NOT NULL DEFAULT '',
  name          TEXT    NOT NULL,
  deleted_at_ms INTEGER NOT NULL,
  PRIMARY KEY (account, name)
);
INSERT INTO queue_tombstones_new (account, name, deleted_at_ms) SELECT '', name, deleted_at_ms FROM queue_tombstones;
DROP TABLE queue_tombstones;
ALTER TABLE queue_tombstones_new RENAME TO queue_tombstones;
