-- Message move tasks belong to the account of their queues (016): a task names its queues by
-- name, and two accounts may each have a queue of that name. Every task so far is the server's
-- own account's (''). One active task per source queue, within its account.
ALTER TABLE move_tasks ADD COLUMN account TEXT NOT NULL DEFAULT '';
DROP INDEX move_tasks_source;
CREATE INDEX move_tasks_source ON move_tasks (account, source_queue, id);
DROP INDEX move_tasks_one_active;
CREATE UNIQUE INDEX move_tasks_one_active ON move_tasks (account, source_queue) WHERE status IN ('RUNNING', 'CANCELLING');
