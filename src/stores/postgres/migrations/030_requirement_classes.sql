-- Worker labels and job requirements (docs/jobs-api.md, "Worker labels"). A job's requires is
-- kept as its canonical JSON (its requirement class) on the job and on its message, and ready
-- messages of a class have an index of their own, so a lease reads the head of each class it
-- can serve and the plain ready index holds only messages that require nothing.
ALTER TABLE jobs ADD COLUMN requires text;
ALTER TABLE messages ADD COLUMN req_class text;
DROP INDEX messages_ready_ungrouped;
CREATE INDEX messages_ready_ungrouped ON messages (queue_id, priority DESC, visible_at_ms, seq) WHERE group_id IS NULL AND req_class IS NULL;
CREATE INDEX messages_ready_class ON messages (queue_id, req_class, priority DESC, visible_at_ms, seq) WHERE group_id IS NULL AND req_class IS NOT NULL;
