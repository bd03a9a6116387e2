-- The running counts (022) are moved by the store's own writes (running-counts.ts), and only for
-- queues that have a count row: the triggers ran on every start and end of every job, limited or not.
-- The rows stay as they are; from now on the writes that change a job move them, in the same write.
DROP TRIGGER job_running_counts_insert;
DROP TRIGGER job_running_counts_start;
DROP TRIGGER job_running_counts_stop;
DROP TRIGGER job_running_counts_delete;
