-- A running attempt's streamed output (POST /v1/jobs/{id}/output): one row per accepted request,
-- its chunks as the JSON array sent, kept as long as the job (deleted with it).
CREATE TABLE job_outputs (
  job_id      TEXT    NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  attempt     INTEGER NOT NULL,
  first_index INTEGER NOT NULL,
  count       INTEGER NOT NULL,
  chunks      TEXT    NOT NULL,
  PRIMARY KEY (job_id, attempt, first_index)
) WITHOUT ROWID;
