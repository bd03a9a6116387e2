-- An event's snapshot is compact (core: eventSnapshotJson, a JSON array by position) and keeps
-- the job's output beside it, as stored, rather than escaped into it. Events written before keep
-- their object snapshot, which readers still read.
ALTER TABLE job_events ADD COLUMN output TEXT;
