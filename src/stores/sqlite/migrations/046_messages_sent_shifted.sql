-- The send-time index holds only messages whose visibility moved off their send time (received,
-- delayed, visible again after a lease). The rest, a backlog's bulk, have visible_at_ms =
-- sent_at_ms, so messages_visible already lists them in send order: retention and the counts
-- read both (queue-counts.ts), and a queued message pays for two indexes instead of three.
DROP INDEX messages_sent;
CREATE INDEX messages_sent_shifted ON messages (queue_id, sent_at_ms) WHERE visible_at_ms <> sent_at_ms;
