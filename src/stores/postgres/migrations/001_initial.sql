-- The whole schema at the PostgreSQL store's first version. Times are epoch milliseconds (bigint),
-- passed in by core, never read from the database's clock: every node agrees with its own tests.

-- Queues, and their tombstones (QueueDeletedRecently).
CREATE TABLE queues (
  id            bigserial PRIMARY KEY, -- never reused: receipt handles name the queue
  name          text   COLLATE "C" NOT NULL UNIQUE, -- "C": listed in byte order, as SQLite does
  config        text   NOT NULL, -- JSON of core QueueConfig
  tags          text   NOT NULL, -- JSON object
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL,
  purged_at_ms  bigint
);

CREATE TABLE queue_tombstones (
  name          text PRIMARY KEY,
  deleted_at_ms bigint NOT NULL
);

-- A sequence never hands out a value twice, so an old receipt handle can never name a new message.
-- The foreign key refuses a message for a queue deleted since its sender read it, and a queue's
-- deletion takes its messages with it.
CREATE TABLE messages (
  seq                   bigserial PRIMARY KEY,
  queue_id              bigint  NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
  message_id            text    NOT NULL,
  body                  text    NOT NULL,
  attributes            text,
  system_attributes     text,
  body_md5              text    NOT NULL,
  attributes_md5        text,
  system_attributes_md5 text,
  sent_at_ms            bigint  NOT NULL,
  visible_at_ms         bigint  NOT NULL,
  priority              integer NOT NULL,
  group_id              text,
  dedup_id              text,
  sender_id             text    NOT NULL,
  receive_count         integer NOT NULL DEFAULT 0,
  first_received_at_ms  bigint,
  received_at_ms        bigint,  -- when the current lease began (ChangeMessageVisibility's 12 h cap)
  receipt_token         text,
  dead_letter_source    text     -- the queue a dead-lettered message came from, by name
);

-- Receive order for ungrouped messages: highest priority first, then by when they became visible.
CREATE INDEX messages_ready_ungrouped ON messages (queue_id, priority DESC, visible_at_ms, seq) WHERE group_id IS NULL;
-- FIFO walks a group in send order; fair receives find a group's next ready message.
CREATE INDEX messages_group_seq ON messages (queue_id, group_id, seq) WHERE group_id IS NOT NULL;
CREATE INDEX messages_group_ready ON messages (queue_id, group_id, priority DESC, visible_at_ms, seq) WHERE group_id IS NOT NULL;
-- Next-visible lookups for long polls, stats and move tasks.
CREATE INDEX messages_visible ON messages (queue_id, visible_at_ms);
-- Retention sweeps.
CREATE INDEX messages_sent ON messages (queue_id, sent_at_ms);

-- One row per message group with messages in a queue (docs/fair-queues.md). `served` counts
-- messages delivered from the group: receives serve the least-served first. The row is also what
-- serializes a group across nodes: a receive locks the rows of the groups it takes from (FOR UPDATE
-- SKIP LOCKED), a send locks its groups' rows before its messages get their seqs, and a row is
-- removed only by locking it first and then finding the group empty in a later statement.
CREATE TABLE message_groups (
  queue_id bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
  group_id text   COLLATE "C" NOT NULL, -- '' is the flow of ungrouped messages on a queue that has groups
  served   bigint NOT NULL,
  PRIMARY KEY (queue_id, group_id)
);
CREATE INDEX message_groups_served ON message_groups (queue_id, served, group_id);

-- FIFO deduplication ids, kept for 5 minutes even after their message is gone. scope is '' for
-- queue-wide deduplication, or the message group id with DeduplicationScope=messageGroup. The
-- primary key is what makes two nodes racing on one id enqueue it once.
CREATE TABLE message_dedup (
  queue_id      bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
  scope         text   NOT NULL,
  dedup_id      text   NOT NULL,
  message_id    text   NOT NULL,
  seq           bigint NOT NULL,
  expires_at_ms bigint NOT NULL,
  PRIMARY KEY (queue_id, scope, dedup_id)
);
CREATE INDEX message_dedup_expiry ON message_dedup (queue_id, expires_at_ms);

-- FIFO ReceiveRequestAttemptId: which messages a receive leased under which token.
CREATE TABLE receive_attempts (
  queue_id      bigint   NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
  attempt_id    text     NOT NULL,
  receipt_token text     NOT NULL,
  seqs          bigint[] NOT NULL,
  expires_at_ms bigint   NOT NULL,
  PRIMARY KEY (queue_id, attempt_id)
);
CREATE INDEX receive_attempts_expiry ON receive_attempts (queue_id, expires_at_ms);

-- Message move tasks (DLQ redrive). Queues by name, as tasks are listed by source.
CREATE TABLE move_tasks (
  id                bigserial PRIMARY KEY, -- newest-first order
  task_handle       text    NOT NULL UNIQUE,
  source_queue      text    COLLATE "C" NOT NULL,
  destination_queue text,
  max_per_second    integer,
  status            text    NOT NULL,
  moved_count       bigint  NOT NULL DEFAULT 0,
  to_move_count     bigint  NOT NULL,
  failure_reason    text,
  started_at_ms     bigint  NOT NULL,
  updated_at_ms     bigint  NOT NULL
);
CREATE INDEX move_tasks_source ON move_tasks (source_queue, id);
-- One active task per source queue, enforced here: two nodes can't both start one.
CREATE UNIQUE INDEX move_tasks_one_active ON move_tasks (source_queue) WHERE status IN ('RUNNING', 'CANCELLING');

-- Jobs (docs/jobs-api.md). A job's message lives in `messages` (message_id = job id, body = input);
-- this row is the job's state, result and history. Both change in the same transaction.
CREATE TABLE jobs (
  seq                 bigserial PRIMARY KEY, -- list order and cursor
  id                  text    NOT NULL UNIQUE,
  queue_id            bigint  NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
  queue_name          text    NOT NULL,
  status              text    NOT NULL, -- queued | running | succeeded | failed | canceled
  input               text    NOT NULL, -- JSON
  output              text,             -- JSON
  error               text,             -- JSON {message, type?}
  attempt             integer NOT NULL,
  max_attempts        integer NOT NULL,
  priority            integer NOT NULL,
  progress            double precision,
  created_at_ms       bigint  NOT NULL,
  started_at_ms       bigint,
  finished_at_ms      bigint,
  updated_at_ms       bigint  NOT NULL,
  idempotency_key     text,
  metadata            text,             -- JSON object
  timeout_seconds     integer,
  webhook             text,             -- JSON {url, events}
  cancel_requested    boolean NOT NULL DEFAULT false,
  lease_token         text,
  lease_seconds       integer,
  lease_expires_at_ms bigint,
  deadline_at_ms      bigint,
  available_at_ms     bigint,
  expires_at_ms       bigint,           -- finished jobs: when they are pruned
  message_seq         bigint
);
CREATE INDEX jobs_queue ON jobs (queue_id, seq);
CREATE INDEX jobs_queue_status ON jobs (queue_id, status, seq);
CREATE INDEX jobs_message ON jobs (message_seq) WHERE message_seq IS NOT NULL;
-- The expiry sweep finds running jobs whose lease ended or whose attempt timed out.
CREATE INDEX jobs_running_lease ON jobs (lease_expires_at_ms) WHERE status = 'running';
CREATE INDEX jobs_running_deadline ON jobs (deadline_at_ms) WHERE status = 'running' AND deadline_at_ms IS NOT NULL;
CREATE INDEX jobs_expiry ON jobs (expires_at_ms) WHERE expires_at_ms IS NOT NULL;

-- Idempotency-Key claims, per queue. The primary key makes two nodes racing on one key create one job.
CREATE TABLE job_idempotency_keys (
  queue_id      bigint NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
  key           text   NOT NULL,
  fingerprint   text   NOT NULL,
  job_id        text   NOT NULL,
  expires_at_ms bigint NOT NULL,
  PRIMARY KEY (queue_id, key)
);
CREATE INDEX job_idempotency_keys_expiry ON job_idempotency_keys (expires_at_ms);

CREATE TABLE job_queue_settings (
  queue_id      bigint PRIMARY KEY REFERENCES queues (id) ON DELETE CASCADE,
  settings      text   NOT NULL, -- JSON of core JobQueueSettings
  updated_at_ms bigint NOT NULL
);

-- The webhook outbox: written in the transaction of the job transition it reports, delivered (at
-- least once) by whichever node claims a due row first. Rows outlive their job (each carries its
-- own snapshot), so deleting a queue never drops a pending delivery.
CREATE TABLE webhook_outbox (
  seq                bigserial PRIMARY KEY,
  id                 text    NOT NULL UNIQUE, -- the webhook-id header
  job_id             text    NOT NULL,
  event              text    NOT NULL,
  url                text    NOT NULL,
  job_snapshot       text    NOT NULL, -- JSON of the job at the event
  status             text    NOT NULL, -- pending | delivered | failed
  attempts           integer NOT NULL DEFAULT 0,
  created_at_ms      bigint  NOT NULL,
  next_attempt_at_ms bigint,
  last_attempt_at_ms bigint,
  last_status_code   integer,
  last_error         text,
  delivered_at_ms    bigint
);
CREATE INDEX webhook_outbox_due ON webhook_outbox (next_attempt_at_ms) WHERE status = 'pending';
CREATE INDEX webhook_outbox_job ON webhook_outbox (job_id, seq);

-- Removes the rows of groups that have no message left, and counts the given groups whose oldest
-- message is visible at p_now (NULL: count nothing). Each group row is locked before its emptiness
-- is checked in a later statement (a fresh snapshot in READ COMMITTED), so a send that is adding a
-- message to the group (it holds the row) either commits first and is seen, or finds the row gone
-- and inserts it anew: never a message whose group has no row.
CREATE FUNCTION sluice_groups_settle(p_queue bigint, p_groups text[], p_now bigint) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  ready integer := 0;
BEGIN
  PERFORM 1 FROM message_groups WHERE queue_id = p_queue AND group_id = ANY (p_groups) ORDER BY group_id FOR UPDATE;
  DELETE FROM message_groups g WHERE g.queue_id = p_queue AND g.group_id = ANY (p_groups) AND g.group_id <> ''
    AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.queue_id = p_queue AND m.group_id = g.group_id);
  IF p_now IS NOT NULL THEN
    SELECT count(*) INTO ready FROM unnest(p_groups) AS t (group_id)
     WHERE (SELECT m.visible_at_ms FROM messages m WHERE m.queue_id = p_queue AND m.group_id = t.group_id ORDER BY m.seq LIMIT 1) <= p_now;
  END IF;
  RETURN ready;
END
$$;
