-- The range-lease protocol. Every statement that acts on a lease names the
-- node and the epoch, so a stale holder changes nothing (fencing). Time is
-- always the database's now().

-- name: retire_quiet_ranges
-- Quiet leases (no heartbeat for the TTL) leave the leased state: fully
-- reported ones become done (with no error: a done range did not fail), those
-- out of attempts failed, the rest are queued again at their resume points
-- for the next node (the claim bumps the epoch, which fences the quiet
-- holder). A periodic task (seeding/maintenance.py: `manage.py maintain`, and
-- every few seconds from the lease path) and the lease service whenever a
-- claim finds nothing run this, so the claim itself never scans the leased
-- ranges.
UPDATE seed_range
   SET status = CASE WHEN next_id > end_id THEN 'done'
                     WHEN attempts >= %(max_attempts)s THEN 'failed'
                     ELSE 'queued' END,
       node_id = CASE WHEN next_id > end_id OR attempts >= %(max_attempts)s THEN node_id END,
       done_at = CASE WHEN next_id > end_id OR attempts >= %(max_attempts)s THEN now() END,
       error = CASE WHEN next_id > end_id THEN ''
                    WHEN attempts >= %(max_attempts)s AND error = ''
                    THEN 'the lease went quiet ' || attempts || ' times' ELSE error END
 WHERE status = 'leased'
   AND heartbeat_at < now() - make_interval(secs => %(ttl)s);

-- name: lease_gate
-- Before a claim: one hit on the node's lease-call bucket (rate_hit, from
-- indexer's migrations), and its live range leases counted up to the cap
-- through seed_range_live_node_idx (a cap of 0, LIMIT 0, counts nothing).
SELECT h.hits, h.retry_after,
       (SELECT count(*) FROM (SELECT 1 FROM seed_range WHERE node_id = %(node_id)s
                               AND status = 'leased' LIMIT %(cap)s) AS l) AS live
  FROM rate_hit(%(key)s, %(window)s) AS h;

-- name: gated_lease_range
-- The lease gate and the claim in one round trip: lease_gate's hit and count
-- (MATERIALIZED: once), then claim_seed_range only when the gate admits the
-- call (rate 0 or cap 0: none) and the node is enabled. OFFSET 0 keeps
-- the subquery whole, so its WHERE, which reads only the gate and the node, is
-- a one-time filter above the function and a refused call claims nothing. No
-- row of the claim: nothing queued.
WITH gate AS MATERIALIZED (
    SELECT h.hits, h.retry_after,
           (SELECT count(*) FROM (SELECT 1 FROM seed_range WHERE node_id = %(node_id)s
                                   AND status = 'leased' LIMIT %(cap)s) AS l) AS live,
           -- disabled (or gone) by another process while this one keeps its
           -- token (TOKEN_CACHE_SECONDS): its leases were ended, none is handed out
           coalesce((SELECT n.disabled FROM seed_node AS n WHERE n.id = %(node_id)s),
                    true) AS disabled
      FROM rate_hit(%(key)s, %(window)s) AS h
)
SELECT gate.hits, gate.retry_after, gate.live, gate.disabled,
       c.out_id AS id, c.out_group AS "group", c.out_next AS start, c.out_end AS "end",
       c.out_epoch AS epoch, c.out_group_id AS group_id
  FROM gate
  LEFT JOIN LATERAL (
      SELECT * FROM claim_seed_range(%(node_id)s, %(ttl)s, %(urgent_below)s, %(rule_version)s)
       WHERE (%(rate)s = 0 OR gate.hits <= %(rate)s) AND (%(cap)s = 0 OR gate.live < %(cap)s)
         AND NOT gate.disabled
      OFFSET 0
  ) AS c ON true;

-- name: end_node_leases
-- Disabled nodes lose their range leases at once: queued again at their
-- resume points (the next claim bumps the epoch, fencing the old holder);
-- a range reported to its end is done (nothing is left to hand out), with no
-- error.
UPDATE seed_range
   SET status = CASE WHEN next_id > end_id THEN 'done' ELSE 'queued' END,
       node_id = CASE WHEN next_id > end_id THEN node_id END,
       done_at = CASE WHEN next_id > end_id THEN now() END,
       error = CASE WHEN next_id > end_id THEN '' ELSE error END
 WHERE node_id = ANY(%(ids)s::bigint[]) AND status = 'leased';

-- name: lease_range
-- Claim one queued range: the function claim_seed_range (sql/migrations/claim.sql).
SELECT out_id AS id, out_group AS "group", out_next AS start, out_end AS "end",
       out_epoch AS epoch, out_group_id AS group_id
  FROM claim_seed_range(%(node_id)s, %(ttl)s, %(urgent_below)s, %(rule_version)s);

-- name: report_batch
-- Moves the resume point to max(current, min(next, end + 1)) and adds the
-- counters only when it moved: a replayed batch adds nothing. The minute's
-- throughput rollup is bumped in the same statement, and the group's name read
-- (catalog.store_files needs it: one statement fewer per batch).
WITH cur AS (
    SELECT id, next_id AS old_next
      FROM seed_range
     WHERE id = %(range_id)s AND status = 'leased' AND node_id = %(node_id)s AND epoch = %(epoch)s
     FOR UPDATE
), moved AS (
    UPDATE seed_range AS r
       SET next_id = GREATEST(r.next_id, LEAST(%(next)s, r.end_id + 1)),
           heartbeat_at = now(),
           headers = r.headers + CASE WHEN LEAST(%(next)s, r.end_id + 1) > r.next_id THEN %(headers)s ELSE 0 END,
           files = r.files + CASE WHEN LEAST(%(next)s, r.end_id + 1) > r.next_id THEN %(files)s ELSE 0 END,
           fragments = r.fragments + CASE WHEN LEAST(%(next)s, r.end_id + 1) > r.next_id THEN %(fragments)s ELSE 0 END
      FROM cur
     WHERE r.id = cur.id
    RETURNING r.next_id, cur.old_next, r.group_id
), rolled AS (
    INSERT INTO header_rollup AS h (bucket, node_id, group_id, headers, batches)
    SELECT date_trunc('minute', now()), %(node_id)s, group_id, %(headers)s, 1
      FROM moved
     WHERE moved.next_id > moved.old_next
    ON CONFLICT (bucket, node_id, group_id)
    DO UPDATE SET headers = h.headers + excluded.headers, batches = h.batches + 1
)
SELECT next_id, next_id > old_next AS advanced, group_id,
       (SELECT name FROM news_group WHERE id = moved.group_id) AS group_name
  FROM moved;

-- name: heartbeat_range
UPDATE seed_range
   SET heartbeat_at = now()
 WHERE id = %(range_id)s AND status = 'leased' AND node_id = %(node_id)s AND epoch = %(epoch)s;

-- name: finish_range
-- The range is done, and an error an earlier release left is cleared (the
-- range did not fail in the end). The trigger seed_range_finished_rollup
-- (sql/migrations/finished.sql) counts it and its headers in the node's
-- minute of the rollup (the status's "finished in the last hour").
UPDATE seed_range
   SET status = 'done', done_at = now(), next_id = end_id + 1, heartbeat_at = now(),
       error = ''
 WHERE id = %(range_id)s AND status = 'leased' AND node_id = %(node_id)s AND epoch = %(epoch)s
RETURNING group_id, headers;

-- name: release_range
-- Queued again, or failed once the attempts are used up. `uncounted` (the
-- node never started) gives the attempt back and always queues, but only
-- max_uncounted times per range: past that it counts like any release, so
-- repeating it cannot keep a range busy forever. A range reported to its end
-- is done instead: nothing of it is left to hand out, and it did not fail, so
-- it keeps no error (neither this release's nor one an earlier release left).
WITH r AS (
    SELECT id, %(uncounted)s AND uncounted_releases < %(max_uncounted)s AS given_back,
           next_id > end_id AS read
      FROM seed_range
     WHERE id = %(range_id)s AND status = 'leased' AND node_id = %(node_id)s AND epoch = %(epoch)s
     FOR UPDATE
)
UPDATE seed_range AS s
   SET status = CASE WHEN r.read THEN 'done'
                     WHEN NOT r.given_back AND attempts >= %(max_attempts)s THEN 'failed'
                     ELSE 'queued' END,
       attempts = CASE WHEN r.given_back THEN GREATEST(attempts - 1, 0) ELSE attempts END,
       uncounted_releases = uncounted_releases + CASE WHEN %(uncounted)s THEN 1 ELSE 0 END,
       done_at = CASE WHEN r.read OR (NOT r.given_back AND attempts >= %(max_attempts)s)
                      THEN now() END,
       node_id = CASE WHEN r.read OR (NOT r.given_back AND attempts >= %(max_attempts)s)
                      THEN node_id END,
       error = CASE WHEN r.read THEN '' ELSE COALESCE(left(%(error)s, 2000), error) END
  FROM r
 WHERE s.id = r.id
RETURNING s.status, r.given_back;

-- name: range_holder
-- Only read when a fenced statement matched nothing, to say why.
SELECT status, node_id, epoch, start_id, end_id FROM seed_range WHERE id = %(range_id)s;

-- name: requeue_ranges
-- A range read to its end is queued again only from its start (otherwise
-- nothing of it would be left to hand out).
UPDATE seed_range
   SET status = 'queued', node_id = NULL, done_at = NULL, attempts = 0, error = '',
       uncounted_releases = 0,
       next_id = CASE WHEN %(from_start)s THEN start_id ELSE next_id END
 WHERE id = ANY(%(ids)s::bigint[]) AND status <> 'queued'
   AND (%(from_start)s OR next_id <= end_id);

-- name: fail_ranges
UPDATE seed_range
   SET status = 'failed', done_at = now(),
       error = CASE WHEN error = '' THEN left(%(reason)s, 2000) ELSE error END
 WHERE id = ANY(%(ids)s::bigint[]) AND status IN ('queued', 'leased');

-- name: reprioritize_ranges
UPDATE seed_range SET priority = %(priority)s WHERE id = ANY(%(ids)s::bigint[]) AND priority <> %(priority)s;

-- name: relay_lease
-- The overview relay's check and heartbeat in one statement: matches only
-- this node's current lease whose range meets from..to; nothing changes otherwise.
UPDATE seed_range AS r
   SET heartbeat_at = now()
  FROM news_group AS g
 WHERE r.id = %(range_id)s AND r.status = 'leased' AND r.node_id = %(node_id)s
   AND r.epoch = %(epoch)s
   AND %(first)s <= r.end_id AND %(last)s >= r.start_id
   AND g.id = r.group_id
RETURNING r.start_id, r.end_id, g.name;
