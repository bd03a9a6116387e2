-- Each queue's stored bytes (its messages' bodies) beside its message count, kept by the same
-- triggers, so a per-queue byte quota (docs/security.md, "Quotas") reads a row, never a sum.
ALTER TABLE queue_message_counts ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
UPDATE queue_message_counts SET bytes = coalesce((SELECT sum(octet_length(body)) FROM messages WHERE messages.queue_id = queue_message_counts.queue_id), 0);

DROP TRIGGER queue_message_counts_on_insert;
DROP TRIGGER queue_message_counts_on_delete;
DROP TRIGGER queue_message_counts_on_move;

CREATE TRIGGER queue_message_counts_on_insert AFTER INSERT ON messages
BEGIN
  UPDATE queue_message_counts SET messages = messages + 1, bytes = bytes + octet_length(new.body) WHERE queue_id = new.queue_id;
END;

CREATE TRIGGER queue_message_counts_on_delete AFTER DELETE ON messages
BEGIN
  UPDATE queue_message_counts SET messages = messages - 1, bytes = bytes - octet_length(old.body) WHERE queue_id = old.queue_id;
END;

CREATE TRIGGER queue_message_counts_on_move AFTER UPDATE OF queue_id ON messages WHEN new.queue_id <> old.queue_id
BEGIN
  UPDATE queue_message_counts SET messages = messages - 1, bytes = bytes - octet_length(old.body) WHERE queue_id = old.queue_id;
  UPDATE queue_message_counts SET messages = messages + 1, bytes = bytes + octet_length(new.body) WHERE queue_id = new.queue_id;
END;
