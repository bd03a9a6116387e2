-- A worker whose labels serve every requirement class of a queue may take any of its ready jobs:
-- this index lists the queue's messages that require something in receive order, all classes
-- together, so such a lease reads one range instead of merging the head of every class.
CREATE INDEX messages_ready_classed ON messages (queue_id, priority DESC, visible_at_ms, seq) WHERE req_class IS NOT NULL;
-- Its priority-0 range lists those messages in visibility order (visible_at_ms, then seq), as
-- messages_ready_ungrouped's lists the unlabelled (migration 048): visibility-order reads take
-- them from there (visible-order.ts), and the visibility index leaves them out.
DROP INDEX messages_visible_other;
CREATE INDEX messages_visible_other ON messages (queue_id, visible_at_ms) WHERE group_id IS NOT NULL OR priority <> 0;
