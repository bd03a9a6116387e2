-- Secrets the server keeps with its data, by name (the key that signs receipt handles): written
-- once, by the first node to start, and read by every start after, so what they signed outlives
-- restarts and is valid on every node of a shared database.
CREATE TABLE server_secrets (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
