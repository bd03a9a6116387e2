-- Each queue's number of messages, kept by triggers on every path that adds or removes them
-- (send, submit, delete, purge, expiry, queue deletion, moves between queues), so a depth read
-- for metrics costs a row, not a count over the queue's messages (queueDepth, docs/operations.md).
CREATE TABLE queue_message_counts (
  queue_id INTEGER PRIMARY KEY REFERENCES queues(id) ON DELETE CASCADE,
  messages INTEGER NOT NULL
);
INSERT INTO queue_message_counts (queue_id, messages)
  SELECT id, (SELECT count(*) FROM messages WHERE messages.queue_id = queues.id) FROM queues;

CREATE TRIGGER queue_message_counts_on_queue_insert AFTER INSERT ON queues
BEGIN
  INSERT INTO queue_message_counts (queue_id, messages) VALUES (new.id, 0);
END;

CREATE TRIGGER queue_message_counts_on_insert AFTER INSERT ON messages
BEGIN
  UPDATE queue_message_counts SET messages = messages + 1 WHERE queue_id = new.queue_id;
END;

CREATE TRIGGER queue_message_counts_on_delete AFTER DELETE ON messages
BEGIN
  UPDATE queue_message_counts SET messages = messages - 1 WHERE queue_id = old.queue_id;
END;

CREATE TRIGGER queue_message_counts_on_move AFTER UPDATE OF queue_id ON messages WHEN new.queue_id <> old.queue_id
BEGIN
  UPDATE queue_message_counts SET messages = messages - 1 WHERE queue_id = old.queue_id;
  UPDATE queue_message_counts SET messages = messages + 1 WHERE queue_id = new.queue_id;
END;
