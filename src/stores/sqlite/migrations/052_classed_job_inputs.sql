-- A job with requires is leased by class, out of submit order, so its lease and its completion
-- rewrite rows that lie among other classes' jobs: with the input in them (on the job, and as its
-- message's body) few share a page, and each of those writes is a page of its own. Such a job's
-- input is kept here instead, written once and read with the job, and its rows stay small. A job
-- row's input '' (never JSON) says it is here; the message's body is '' then, and body_bytes the
-- size it counts for in its queue's kept bytes (kept-counts.ts: keptBytesSql).
CREATE TABLE job_inputs (
  seq   INTEGER PRIMARY KEY, -- the job's jobs.seq
  input TEXT    NOT NULL
);

CREATE TRIGGER job_inputs_on_job_delete AFTER DELETE ON jobs WHEN old.input = ''
BEGIN
  DELETE FROM job_inputs WHERE seq = old.seq;
END;

ALTER TABLE messages ADD COLUMN body_bytes INTEGER;

-- Moves between queues count a message's bytes as the writes do (kept-counts.ts).
DROP TRIGGER queue_message_counts_on_move;
CREATE TRIGGER queue_message_counts_on_move AFTER UPDATE OF queue_id ON messages WHEN new.queue_id <> old.queue_id
BEGIN
  UPDATE queue_message_counts SET messages = messages - 1, bytes = bytes - coalesce(old.body_bytes, octet_length(old.body)) WHERE queue_id = old.queue_id;
  UPDATE queue_message_counts SET messages = messages + 1, bytes = bytes + coalesce(new.body_bytes, octet_length(new.body)) WHERE queue_id = new.queue_id;
END;
