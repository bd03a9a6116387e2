-- The kept message counts (015, 033) are moved by the store's writes that add and delete messages
-- (kept-counts.ts), one UPDATE per statement: these triggers' octet_length() made SQLite keep a
-- statement journal, a copy of every page, for each message INSERT and DELETE. Moves between
-- queues keep their trigger. The counts stay as they are; from now on the writes move them.
DROP TRIGGER queue_message_counts_on_insert;
DROP TRIGGER queue_message_counts_on_delete;
