-- The database's clock (time comes from the database, never a node's).

-- name: database_clock
-- The database's clock in Unix seconds: the ping's one trivial query.
SELECT extract(epoch FROM now())::bigint AS now;

-- name: primary_wal_position
-- How far the primary's write-ahead log has gone, in bytes (core/replicas.py).
SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS position;

-- name: replica_wal_position
-- How far a replica has replayed the primary's log, in bytes; a server that is
-- not in recovery (a promoted one) has replayed everything it wrote.
SELECT pg_is_in_recovery() AS in_recovery,
       pg_wal_lsn_diff(
           CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()
                ELSE pg_current_wal_lsn() END,
           '0/0'
       )::bigint AS position;
