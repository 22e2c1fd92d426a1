-- Startup of a coordinator host (indexer/startup.py): one host at a time
-- migrates and creates the admin login. A session-level lock, so it is held
-- across the transactions `migrate` opens; a killed process frees it.

-- name: startup_lock
SELECT pg_advisory_lock(hashtext('indexer.startup')::bigint) IS NOT NULL AS locked;

-- name: startup_unlock
SELECT pg_advisory_unlock(hashtext('indexer.startup')::bigint) AS unlocked;
