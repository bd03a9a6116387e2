-- The send-time index holds only messages whose visibility moved off their send time (received,
-- delayed, visible again after a lease). The rest, a backlog's bulk, have visible_at_ms =
-- sent_at_ms, so the visibility order (visible-order.ts) lists them in send order already:
-- retention and the counts read both (queue-counts.ts), and a queued message pays for one index
-- entry fewer.
DROP INDEX messages_sent;
CREATE INDEX messages_sent_shifted ON messages (queue_id, sent_at_ms) WHERE visible_at_ms <> sent_at_ms;
