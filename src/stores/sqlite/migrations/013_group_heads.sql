-- FIFO receives start from the oldest available group, as SQS does: each group row remembers its
-- oldest message (head_seq), kept exact by the triggers below, and FIFO receives walk the groups in
-- head order. Fair (standard) queues keep their least-served order.
ALTER TABLE message_groups ADD COLUMN head_seq INTEGER;
UPDATE message_groups SET head_seq = (
  SELECT min(seq) FROM messages INDEXED BY messages_group_seq
  WHERE messages.queue_id = message_groups.queue_id AND messages.group_id = message_groups.group_id
);
CREATE INDEX message_groups_head ON message_groups (queue_id, head_seq);

DROP TRIGGER message_groups_on_insert;
DROP TRIGGER message_groups_on_delete;
DROP TRIGGER message_groups_on_move;

-- seqs only grow, so an insert heads its group only when it creates it.
CREATE TRIGGER message_groups_on_insert AFTER INSERT ON messages WHEN new.group_id IS NOT NULL
BEGIN
  INSERT INTO message_groups (queue_id, group_id, served, head_seq)
  SELECT new.queue_id, new.group_id, coalesce((SELECT min(served) FROM message_groups WHERE queue_id = new.queue_id), 0), new.seq
  WHERE NOT EXISTS (SELECT 1 FROM message_groups WHERE queue_id = new.queue_id AND group_id = new.group_id);
END;

-- Deleting a group's head finds the next one; a group left without a head is gone.
CREATE TRIGGER message_groups_on_delete AFTER DELETE ON messages WHEN old.group_id IS NOT NULL
BEGIN
  UPDATE message_groups SET head_seq = (
    SELECT min(seq) FROM messages INDEXED BY messages_group_seq WHERE queue_id = old.queue_id AND group_id = old.group_id
  ) WHERE queue_id = old.queue_id AND group_id = old.group_id AND head_seq = old.seq;
  DELETE FROM message_groups WHERE queue_id = old.queue_id AND group_id = old.group_id AND head_seq IS NULL;
END;

-- A message moved in place (standard dead-lettering, redrive) keeps its seq, which may be older
-- than the head of the group it joins.
CREATE TRIGGER message_groups_on_move AFTER UPDATE OF queue_id ON messages
  WHEN old.group_id IS NOT NULL AND new.queue_id <> old.queue_id
BEGIN
  UPDATE message_groups SET head_seq = (
    SELECT min(seq) FROM messages INDEXED BY messages_group_seq WHERE queue_id = old.queue_id AND group_id = old.group_id
  ) WHERE queue_id = old.queue_id AND group_id = old.group_id AND head_seq = old.seq;
  DELETE FROM message_groups WHERE queue_id = old.queue_id AND group_id = old.group_id AND head_seq IS NULL;
  UPDATE message_groups SET head_seq = new.seq
    WHERE queue_id = new.queue_id AND group_id = new.group_id AND head_seq > new.seq;
  INSERT INTO message_groups (queue_id, group_id, served, head_seq)
  SELECT new.queue_id, new.group_id, coalesce((SELECT min(served) FROM message_groups WHERE queue_id = new.queue_id), 0), new.seq
  WHERE NOT EXISTS (SELECT 1 FROM message_groups WHERE queue_id = new.queue_id AND group_id = new.group_id);
END;
