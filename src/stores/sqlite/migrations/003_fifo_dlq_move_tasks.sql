-- FIFO queues, fair queues (message groups on standard queues), dead-letter queues and message
-- move tasks. Messages without a group pay for none of this.

-- The queue a dead-lettered message came from, by name: redrive looks it up again when moving
-- the message back, and it outlives a deleted-and-recreated queue's id.
ALTER TABLE messages ADD COLUMN dead_letter_source TEXT;

-- The ready index now holds only ungrouped messages: grouped ones are found through their group
-- (below), so a big group's backlog never sits in front of a lookup for ungrouped messages.
DROP INDEX messages_ready;
CREATE INDEX messages_ready_ungrouped ON messages (queue_id, priority DESC, visible_at_ms, seq) WHERE group_id IS NULL;
-- FIFO walks a group in send order; fair receives find a group's next visible message.
CREATE INDEX messages_group_seq ON messages (queue_id, group_id, seq) WHERE group_id IS NOT NULL;
CREATE INDEX messages_group_ready ON messages (queue_id, group_id, priority DESC, visible_at_ms, seq) WHERE group_id IS NOT NULL;

-- One row per message group that has messages in a queue. `served` counts messages delivered
-- from the group: receives serve the least-served groups first (docs/fair-queues.md). A new group
-- starts at the queue's lowest count, so it can't starve groups that were there before it.
CREATE TABLE message_groups (
  queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
  group_id TEXT    NOT NULL, -- '' is the flow of ungrouped messages on a queue that has groups
  served   INTEGER NOT NULL,
  PRIMARY KEY (queue_id, group_id)
) WITHOUT ROWID;
CREATE INDEX message_groups_served ON message_groups (queue_id, served);

-- Triggers keep message_groups exact on every path that adds or removes messages (send, delete,
-- purge, expiry, queue deletion, moves between queues), including ones written later.
CREATE TRIGGER message_groups_on_insert AFTER INSERT ON messages WHEN new.group_id IS NOT NULL
BEGIN
  INSERT INTO message_groups (queue_id, group_id, served)
  SELECT new.queue_id, new.group_id, coalesce((SELECT min(served) FROM message_groups WHERE queue_id = new.queue_id), 0)
  WHERE NOT EXISTS (SELECT 1 FROM message_groups WHERE queue_id = new.queue_id AND group_id = new.group_id);
END;

CREATE TRIGGER message_groups_on_delete AFTER DELETE ON messages WHEN old.group_id IS NOT NULL
BEGIN
  DELETE FROM message_groups WHERE queue_id = old.queue_id AND group_id = old.group_id
    AND NOT EXISTS (SELECT 1 FROM messages WHERE queue_id = old.queue_id AND group_id = old.group_id);
END;

CREATE TRIGGER message_groups_on_move AFTER UPDATE OF queue_id ON messages
  WHEN old.group_id IS NOT NULL AND new.queue_id <> old.queue_id
BEGIN
  DELETE FROM message_groups WHERE queue_id = old.queue_id AND group_id = old.group_id
    AND NOT EXISTS (SELECT 1 FROM messages WHERE queue_id = old.queue_id AND group_id = old.group_id);
  INSERT INTO message_groups (queue_id, group_id, served)
  SELECT new.queue_id, new.group_id, coalesce((SELECT min(served) FROM message_groups WHERE queue_id = new.queue_id), 0)
  WHERE NOT EXISTS (SELECT 1 FROM message_groups WHERE queue_id = new.queue_id AND group_id = new.group_id);
END;

-- FIFO deduplication ids, kept for 5 minutes even after their message is gone. scope is '' for
-- queue-wide deduplication, or the message group id with DeduplicationScope=messageGroup.
CREATE TABLE message_dedup (
  queue_id      INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
  scope         TEXT    NOT NULL,
  dedup_id      TEXT    NOT NULL,
  message_id    TEXT    NOT NULL,
  seq           INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  PRIMARY KEY (queue_id, scope, dedup_id)
) WITHOUT ROWID;
CREATE INDEX message_dedup_expiry ON message_dedup (queue_id, expires_at_ms);

-- FIFO ReceiveRequestAttemptId: which messages (seqs, JSON array) a receive leased under which token.
CREATE TABLE receive_attempts (
  queue_id      INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
  attempt_id    TEXT    NOT NULL,
  receipt_token TEXT    NOT NULL,
  seqs          TEXT    NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  PRIMARY KEY (queue_id, attempt_id)
) WITHOUT ROWID;
CREATE INDEX receive_attempts_expiry ON receive_attempts (queue_id, expires_at_ms);

-- Message move tasks (DLQ redrive). Queues by name, as SQS lists tasks by source ARN.
CREATE TABLE move_tasks (
  id                INTEGER PRIMARY KEY AUTOINCREMENT, -- newest-first order
  task_handle       TEXT    NOT NULL UNIQUE,
  source_queue      TEXT    NOT NULL,
  destination_queue TEXT,
  max_per_second    INTEGER,
  status            TEXT    NOT NULL,
  moved_count       INTEGER NOT NULL DEFAULT 0,
  to_move_count     INTEGER NOT NULL,
  failure_reason    TEXT,
  started_at_ms     INTEGER NOT NULL,
  updated_at_ms     INTEGER NOT NULL
);
CREATE INDEX move_tasks_source ON move_tasks (source_queue, id);
-- SQS allows one active task per source queue.
CREATE UNIQUE INDEX move_tasks_one_active ON move_tasks (source_queue) WHERE status IN ('RUNNING', 'CANCELLING');
