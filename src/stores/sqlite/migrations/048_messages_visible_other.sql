-- The visibility index leaves out ungrouped messages of priority 0 that require nothing: the
-- ready index's priority-0 range lists them in the same order (visible_at_ms, then seq), so
-- visibility-order reads take them from there (visible-order.ts) and a queued message pays for
-- one index entry instead of two.
DROP INDEX messages_visible;
CREATE INDEX messages_visible_other ON messages (queue_id, visible_at_ms) WHERE group_id IS NOT NULL OR req_class IS NOT NULL OR priority <> 0;
