-- The database's clock (time comes from the database, never a node's).

-- name: database_clock
-- The database's clock in Unix seconds: the ping's one trivial query.
SELECT extract(epoch FROM now())::bigint AS now;
