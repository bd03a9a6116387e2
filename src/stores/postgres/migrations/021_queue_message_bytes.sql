-- Each queue's stored bytes (its messages' bodies) beside its message count, in the same signed
-- delta rows, so a per-queue byte quota (docs/security.md, "Quotas") sums a few rows, never the queue.
ALTER TABLE queue_message_counts ADD COLUMN bytes bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION sluice_counts_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_message_counts (queue_id, messages, bytes) SELECT queue_id, count(*), sum(octet_length(body)) FROM sluice_added GROUP BY queue_id;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION sluice_counts_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_message_counts (queue_id, messages, bytes) SELECT queue_id, -count(*), -sum(octet_length(body)) FROM sluice_removed GROUP BY queue_id;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION sluice_counts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO queue_message_counts (queue_id, messages, bytes) VALUES (OLD.queue_id, -1, -octet_length(OLD.body)), (NEW.queue_id, 1, octet_length(NEW.body));
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION sluice_counts_fold(q bigint) RETURNS void LANGUAGE sql AS $$
  WITH gone AS (DELETE FROM queue_message_counts WHERE queue_id = q RETURNING messages, bytes)
  INSERT INTO queue_message_counts (queue_id, messages, bytes) SELECT q, sum(messages), sum(bytes) FROM gone HAVING count(*) > 0;
$$;

-- The bytes already stored, as one delta row per queue (its message count unchanged).
INSERT INTO queue_message_counts (queue_id, messages, bytes) SELECT queue_id, 0, sum(octet_length(body)) FROM messages GROUP BY queue_id;
