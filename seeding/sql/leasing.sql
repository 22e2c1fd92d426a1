-- name: lock_node_leases
-- The lease call's lock on one node's leases of one table (%(table)s: its noun),
-- held to the end of the call's transaction. Taken as a statement of its own
-- before the gated claim, so the claim's snapshot is taken after the node's
-- previous call committed: it counts the leases that call handed out. Another
-- node's calls take another lock and never wait on this one.
SELECT pg_advisory_xact_lock(hashtext('lease:' || %(table)s), mod(%(node_id)s, 2147483647)::int);
