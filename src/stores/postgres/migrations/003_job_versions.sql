-- A job's change count: 1 at submit, +1 with every change. Notices of a job carry it, so a node
-- that hears of two changes out of order drops the older one.
ALTER TABLE jobs ADD COLUMN version bigint NOT NULL DEFAULT 1;
