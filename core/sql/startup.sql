-- Startup of a coordinator host (core/startup.py): one host at a time
-- migrates and creates the admin login. A session-level lock, so it is held
-- across the transactions `migrate` opens; a killed process frees it.

-- name: startup_try_lock
-- Tried, never waited for inside the statement: a session blocked in
-- pg_advisory_lock holds a transaction open, which the lock holder's CREATE
-- INDEX CONCURRENTLY (a migration) waits for: a deadlock (core/startup.py).
SELECT pg_try_advisory_lock(hashtext('core.startup')::bigint) AS locked;

-- name: startup_unlock
SELECT pg_advisory_unlock(hashtext('core.startup')::bigint) AS unlocked;

-- name: connection_limits
-- What the server lets ordinary sessions open: max_connections less the
-- slots kept for superusers (and, from PostgreSQL 16, reserved_connections).
SELECT current_setting('max_connections')::int AS max_connections,
       current_setting('superuser_reserved_connections')::int
         + coalesce(current_setting('reserved_connections', true), '0')::int AS reserved;
