-- Queues belong to an account: a name is unique within its account, not across the server, so
-- two accounts can each have an `orders` queue. '' is the server's own account (--account-id);
-- every queue made before this migration is its, so existing queue URLs keep working.
ALTER TABLE queues ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE queues DROP CONSTRAINT queues_name_key;
ALTER TABLE queues ADD CONSTRAINT queues_account_name_key UNIQUE (account, name);

ALTER TABLE queue_tombstones ADD COLUMN account text NOT NULL DEFAULT '';
ALTER TABLE queue_tombstones DROP CONSTRAINT queue_tombstones_pkey;
ALTER TABLE queue_tombstones ADD PRIMARY KEY (account, name);
