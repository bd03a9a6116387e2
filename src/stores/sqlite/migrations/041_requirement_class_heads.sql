-- A labelled lease probes the head of every class it serves, and takes only the best of them:
-- the class index covers what the probe reads (its sent time included), so a probe reads no
-- message rows. Job messages with a requirement never have a group (core refuses requires with
-- tenant), so the index needs no group condition, and a probe no group check on the row.
DROP INDEX messages_ready_class;
CREATE INDEX messages_ready_class ON messages (queue_id, req_class, priority DESC, visible_at_ms, seq, sent_at_ms) WHERE req_class IS NOT NULL;
