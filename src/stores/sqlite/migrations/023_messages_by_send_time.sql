-- Retention deletes a queue's oldest messages in small slices (messageExpire's limit), and the
-- stats count the messages past retention: both walk this index from the queue's oldest send
-- time, so a slice or a count costs what it reads, never the whole backlog.
CREATE INDEX messages_sent ON messages (queue_id, sent_at_ms);
