-- News-server connection slots (indexer/connection_slots.py): one session
-- advisory lock per open connection, on a session of their own, so a process
-- that dies frees its slots with its session.

-- name: take_connection_slot
-- The first free slot below the cap, locked; none when all are taken. LIMIT 1
-- on a plain scan stops at the first row whose lock was taken.
SELECT slot
  FROM generate_series(0, %(cap)s::int - 1) AS slot
 WHERE slot <> ALL(%(held)s::int[])
   AND pg_try_advisory_lock(hashtext('indexer.nntp_connection'), slot)
 LIMIT 1;

-- name: free_connection_slot
SELECT pg_advisory_unlock(hashtext('indexer.nntp_connection'), %(slot)s::int) AS freed;
