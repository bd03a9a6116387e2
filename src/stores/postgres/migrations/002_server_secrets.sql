-- Secrets the server keeps with its data, by name (the key that signs receipt handles): written
-- once, by the first node to start, and read by every node after, so what they signed is valid
-- on every node and outlives restarts.
CREATE TABLE server_secrets (
  name  text PRIMARY KEY,
  value text NOT NULL
);
