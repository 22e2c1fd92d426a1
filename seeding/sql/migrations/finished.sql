-- Every range made done counts as finished in its holder's minute of the
-- throughput rollup (the status's "finished in the last hour"), whichever path
-- made it done: finish, a release or a lane's give-back of a range read to its
-- end, the quiet-lease sweep, a takeover's reset, a disabled node's leases.
-- Installed by seeding's migration 0011; a block a migration has run is never
-- edited: a change is a new block and a new migration.

-- name: create_finished_rollup_trigger
-- Row-level, and only when a range becomes done with a holder on record: the
-- claim, batches and heartbeats never fire it (the WHEN clause is all they
-- cost). A range with no holder (queued read ranges the read-range sweep makes
-- done, left by versions before the checks that keep them out of the queue)
-- has no node to count on.
CREATE FUNCTION seed_range_count_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO header_rollup AS h (bucket, node_id, group_id, headers, batches,
                                    ranges_finished, finished_headers)
    VALUES (date_trunc('minute', now()), NEW.node_id, NEW.group_id, 0, 0, 1, NEW.headers)
    ON CONFLICT (bucket, node_id, group_id)
    DO UPDATE SET ranges_finished = h.ranges_finished + 1,
                  finished_headers = h.finished_headers + excluded.finished_headers;
    RETURN NULL;
END
$$;

CREATE TRIGGER seed_range_finished_rollup
AFTER UPDATE ON seed_range
FOR EACH ROW
WHEN (NEW.status = 'done' AND OLD.status IS DISTINCT FROM 'done' AND NEW.node_id IS NOT NULL)
EXECUTE FUNCTION seed_range_count_finished();

-- name: drop_finished_rollup_trigger
DROP TRIGGER IF EXISTS seed_range_finished_rollup ON seed_range;
DROP FUNCTION IF EXISTS seed_range_count_finished();
