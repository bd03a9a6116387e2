-- Jobs, their events and schedules belong to an account, as their queues do (004): '' is the
-- server's own account, which keeps every job, event and schedule made before this migration.
-- A job's account is its queue's, written when it is created; the event log keeps it per event so
-- an account's event stream reads only its own events, and a schedule's name is unique within
-- its account.
ALTER TABLE jobs ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE job_events ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT '';

ALTER TABLE schedules ADD COLUMN account text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE schedules DROP CONSTRAINT schedules_pkey;
ALTER TABLE schedules ADD PRIMARY KEY (account, name);
