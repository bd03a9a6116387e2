-- Each queue's number of messages, for queueStats without a count over the queue: one signed
-- delta row per statement that adds or removes a queue's messages (statement triggers over the
-- transition tables, in the statement's transaction, so a crash takes both or neither). Writers
-- only insert, so nodes never wait on a shared counter row; upkeep folds a queue's rows into
-- one (sluice_counts_fold), and a read sums the few rows left (docs/multi-node.md).
CREATE TABLE queue_message_counts (
  queue_id bigint NOT NULL, -- no foreign key: a queue's deletion cascades to its messages, whose trigger still writes here
  messages bigint NOT NULL
);
CREATE INDEX queue_message_counts_queue ON queue_message_counts (queue_id);

CREATE FUNCTION sluice_counts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_message_counts (queue_id, messages) SELECT queue_id, count(*) FROM sluice_added GROUP BY queue_id;
  RETURN NULL;
END $$;

CREATE FUNCTION sluice_counts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_message_counts (queue_id, messages) SELECT queue_id, -count(*) FROM sluice_removed GROUP BY queue_id;
  RETURN NULL;
END $$;

-- Moves between queues (dead-lettering, redrive) are rare: a row trigger, which an update that
-- leaves queue_id alone (every receive) skips on its WHEN alone.
CREATE FUNCTION sluice_counts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_message_counts (queue_id, messages) VALUES (OLD.queue_id, -1), (NEW.queue_id, 1);
  RETURN NULL;
END $$;

-- Created before the first count: their lock on messages holds other nodes' writes until this commits.
CREATE TRIGGER messages_count_insert AFTER INSERT ON messages REFERENCING NEW TABLE AS sluice_added FOR EACH STATEMENT EXECUTE FUNCTION sluice_counts_added();
CREATE TRIGGER messages_count_delete AFTER DELETE ON messages REFERENCING OLD TABLE AS sluice_removed FOR EACH STATEMENT EXECUTE FUNCTION sluice_counts_removed();
CREATE TRIGGER messages_count_move AFTER UPDATE OF queue_id ON messages FOR EACH ROW WHEN (OLD.queue_id <> NEW.queue_id) EXECUTE FUNCTION sluice_counts_moved();

INSERT INTO queue_message_counts (queue_id, messages) SELECT queue_id, count(*) FROM messages GROUP BY queue_id;

-- Folds a queue's delta rows into one. Concurrent folds and writes are safe: a row another fold
-- deleted first is skipped (its sum went into that fold's row), and rows written meanwhile stay.
CREATE FUNCTION sluice_counts_fold(q bigint) RETURNS void LANGUAGE sql AS $$
  WITH gone AS (DELETE FROM queue_message_counts WHERE queue_id = q RETURNING messages)
  INSERT INTO queue_message_counts (queue_id, messages) SELECT q, sum(messages) FROM gone HAVING count(*) > 0;
$$;
