-- A running attempt's streamed output (POST /v1/jobs/{id}/output): one row per accepted request,
-- its chunks as the JSON array sent, kept as long as the job (deleted with it).
CREATE TABLE job_outputs (
  job_id      text    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  attempt     integer NOT NULL,
  first_index integer NOT NULL,
  count       integer NOT NULL,
  chunks      text    NOT NULL,
  PRIMARY KEY (job_id, attempt, first_index)
);
