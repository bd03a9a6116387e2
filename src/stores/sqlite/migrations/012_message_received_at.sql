-- When the message's current lease began (its latest receive): SQS keeps a message in flight at
-- most 12 hours from the receive, so ChangeMessageVisibility checks against this. NULL (rows
-- leased before this migration, or by a job lease) means no check.
ALTER TABLE messages ADD COLUMN received_at_ms INTEGER;
