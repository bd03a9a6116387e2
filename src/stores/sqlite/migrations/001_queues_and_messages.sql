-- Queues, their tombstones (for QueueDeletedRecently) and messages.
CREATE TABLE queues (
  id            INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: receipt handles name the queue
  name          TEXT    NOT NULL UNIQUE,
  config        TEXT    NOT NULL, -- JSON of core QueueConfig
  tags          TEXT    NOT NULL, -- JSON object
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  purged_at_ms  INTEGER
);

CREATE TABLE queue_tombstones (
  name          TEXT PRIMARY KEY,
  deleted_at_ms INTEGER NOT NULL
);

-- AUTOINCREMENT: a seq is never reused, so an old receipt handle can never name a new message.
CREATE TABLE messages (
  seq                   INTEGER PRIMARY KEY AUTOINCREMENT,
  queue_id              INTEGER NOT NULL,
  message_id            TEXT    NOT NULL,
  body                  TEXT    NOT NULL,
  attributes            TEXT,
  system_attributes     TEXT,
  body_md5              TEXT    NOT NULL,
  attributes_md5        TEXT,
  system_attributes_md5 TEXT,
  sent_at_ms            INTEGER NOT NULL,
  visible_at_ms         INTEGER NOT NULL,
  priority              INTEGER NOT NULL,
  group_id              TEXT,
  dedup_id              TEXT,
  sender_id             TEXT    NOT NULL,
  receive_count         INTEGER NOT NULL DEFAULT 0,
  first_received_at_ms  INTEGER,
  receipt_token         TEXT
);

-- Receive order: highest priority first, then in the order messages became visible. Scanning
-- this index skips only in-flight/delayed messages of higher priorities, never the backlog.
CREATE INDEX messages_ready ON messages (queue_id, priority DESC, visible_at_ms, seq);
-- Next-visible lookups for long-poll timers, and the stats counts.
CREATE INDEX messages_visible ON messages (queue_id, visible_at_ms);
