-- The inspection leases (issue 26), the same protocol as seed ranges
-- (seeding/leasing.py): every statement acting on a lease names the node and
-- the epoch (fencing); time is the database's now(). A queued row is handed
-- out only once it names articles (planning fills them as the files come).

-- name: inspection_gate
-- One hit on the node's lease-call bucket (shared with ranges and lanes) and
-- its live inspection leases counted up to INSPECT_LEASES_PER_NODE.
SELECT h.hits, h.retry_after,
       (SELECT count(*) FROM (SELECT 1 FROM inspection WHERE node_id = %(node_id)s
                               AND status = 'leased' LIMIT %(cap)s) AS l) AS live
  FROM rate_hit(%(key)s, %(window)s) AS h;

-- name: lease_inspection
-- The gate and the claim in one statement: the newest queued releases with
-- articles, up to %(count)s of them and no more than the node's cap leaves it
-- (INSPECT_LEASES_PER_NODE less its live leases), skipping rows another claim
-- holds (SKIP LOCKED), only when the gate admits the call and the node is
-- enabled. The claim bumps each epoch, which fences any earlier holder. One
-- row per inspection claimed, newest first; one with a null id when none was.
WITH gate AS MATERIALIZED (
    SELECT h.hits, h.retry_after,
           (SELECT count(*) FROM (SELECT 1 FROM inspection WHERE node_id = %(node_id)s
                                   AND status = 'leased' LIMIT %(cap)s) AS l) AS live,
           coalesce((SELECT n.disabled FROM seed_node AS n WHERE n.id = %(node_id)s),
                    true) AS disabled
      FROM rate_hit(%(key)s, %(window)s) AS h
), picked AS (
    SELECT i.id
      FROM inspection AS i
     WHERE i.status = 'queued' AND i.articles <> '[]'::jsonb
       AND EXISTS (SELECT 1 FROM gate
                    WHERE (%(rate)s = 0 OR gate.hits <= %(rate)s)
                      AND (%(cap)s = 0 OR gate.live < %(cap)s)
                      AND NOT gate.disabled)
     ORDER BY i.posted DESC, i.id DESC
     LIMIT (SELECT CASE WHEN %(cap)s = 0 THEN %(count)s
                        ELSE least(%(count)s, greatest(%(cap)s - gate.live, 0)) END
              FROM gate)
       FOR UPDATE OF i SKIP LOCKED
), claimed AS (
    UPDATE inspection AS i
       SET status = 'leased', node_id = %(node_id)s, epoch = i.epoch + 1,
           attempts = i.attempts + 1, leased_at = now(), heartbeat_at = now()
      FROM picked
     WHERE i.id = picked.id
    RETURNING i.id, i.epoch, i.release_id, i.group_id, i.articles, i.posted
)
SELECT gate.hits, gate.retry_after, gate.live, gate.disabled,
       c.id, c.epoch, c.release_id, g.name AS "group", c.articles
  FROM gate
  LEFT JOIN claimed AS c ON true
  LEFT JOIN news_group AS g ON g.id = c.group_id
 ORDER BY c.posted DESC, c.id DESC;

-- name: claim_inspection
-- lease_inspection's claim without its gate: run again after the sweep freed
-- leases, when the gate already counted this call and admitted it (%(count)s is
-- then what the cap left the call).
WITH picked AS (
    SELECT i.id
      FROM inspection AS i
     WHERE i.status = 'queued' AND i.articles <> '[]'::jsonb
     ORDER BY i.posted DESC, i.id DESC
     LIMIT %(count)s
       FOR UPDATE OF i SKIP LOCKED
), claimed AS (
    UPDATE inspection AS i
       SET status = 'leased', node_id = %(node_id)s, epoch = i.epoch + 1,
           attempts = i.attempts + 1, leased_at = now(), heartbeat_at = now()
      FROM picked
     WHERE i.id = picked.id
    RETURNING i.id, i.epoch, i.release_id, i.group_id, i.articles, i.posted
)
SELECT c.id, c.epoch, c.release_id, g.name AS "group", c.articles
  FROM claimed AS c
  LEFT JOIN news_group AS g ON g.id = c.group_id
 ORDER BY c.posted DESC, c.id DESC;

-- name: inspection_holder
-- Only read when a fenced statement matched nothing, to say why.
SELECT status, node_id, epoch FROM inspection WHERE id = %(inspection_id)s;

-- name: heartbeat_inspection
UPDATE inspection
   SET heartbeat_at = now()
 WHERE id = %(inspection_id)s AND status = 'leased' AND node_id = %(node_id)s
   AND epoch = %(epoch)s;

-- name: release_inspection
-- Queued again, or failed once the attempts are used up. `uncounted` (the
-- node never started) gives the attempt back and always queues, but only
-- max_uncounted times per row: past that it counts like any release.
WITH r AS (
    SELECT id, %(uncounted)s AND uncounted_releases < %(max_uncounted)s AS given_back
      FROM inspection
     WHERE id = %(inspection_id)s AND status = 'leased' AND node_id = %(node_id)s
       AND epoch = %(epoch)s
     FOR UPDATE
)
UPDATE inspection AS s
   SET status = CASE WHEN NOT r.given_back AND attempts >= %(max_attempts)s THEN 'failed'
                     ELSE 'queued' END,
       attempts = CASE WHEN r.given_back THEN GREATEST(attempts - 1, 0) ELSE attempts END,
       uncounted_releases = uncounted_releases + CASE WHEN %(uncounted)s THEN 1 ELSE 0 END,
       done_at = CASE WHEN NOT r.given_back AND attempts >= %(max_attempts)s THEN now() END,
       node_id = CASE WHEN NOT r.given_back AND attempts >= %(max_attempts)s THEN node_id END,
       error = COALESCE(left(%(error)s, 2000), error)
  FROM r
 WHERE s.id = r.id
RETURNING s.status, r.given_back;

-- name: retire_quiet_inspections
-- Quiet leases (no heartbeat for the TTL): failed when out of attempts, the
-- rest queued for the next node (its claim bumps the epoch). Run by the
-- periodic upkeep (seeding/maintenance.py), also from the lease call when a
-- claim finds nothing (seeding.leasing.WorkTable.lease).
UPDATE inspection
   SET status = CASE WHEN attempts >= %(max_attempts)s THEN 'failed' ELSE 'queued' END,
       node_id = CASE WHEN attempts >= %(max_attempts)s THEN node_id END,
       done_at = CASE WHEN attempts >= %(max_attempts)s THEN now() END,
       error = CASE WHEN attempts >= %(max_attempts)s AND error = ''
                    THEN 'the lease went quiet ' || attempts || ' times' ELSE error END
 WHERE status = 'leased'
   AND heartbeat_at < now() - make_interval(secs => %(ttl)s);

-- name: end_node_inspections
-- Disabled nodes lose their inspection leases at once: queued again.
UPDATE inspection
   SET status = 'queued', node_id = NULL
 WHERE node_id = ANY(%(ids)s::bigint[]) AND status = 'leased';

-- name: finish_inspection
-- The report's fenced end: the row is locked until the caller's transaction
-- (which applies the report to the release) commits; done, with no error.
UPDATE inspection
   SET status = 'done', done_at = now(), heartbeat_at = now(), error = '',
       outcome = %(outcome)s
 WHERE id = %(inspection_id)s AND status = 'leased' AND node_id = %(node_id)s
   AND epoch = %(epoch)s
RETURNING release_id;

-- name: lock_inspection
-- The report's first step: this node's current lease, locked, and the release.
SELECT release_id, articles
  FROM inspection
 WHERE id = %(inspection_id)s AND status = 'leased' AND node_id = %(node_id)s
   AND epoch = %(epoch)s
   FOR UPDATE;

-- name: relay_inspection
-- The body relay's check and heartbeat in one statement: this node's current
-- lease, and only a message-id the lease names.
UPDATE inspection AS i
   SET heartbeat_at = now()
 WHERE i.id = %(inspection_id)s AND i.status = 'leased' AND i.node_id = %(node_id)s
   AND i.epoch = %(epoch)s
   AND EXISTS (SELECT 1 FROM jsonb_array_elements(i.articles) AS a
                WHERE a -> 'message_ids' ? %(message_id)s)
RETURNING i.id;

-- name: requeue_inspections
UPDATE inspection
   SET status = 'queued', node_id = NULL, done_at = NULL, attempts = 0, error = '',
       uncounted_releases = 0
 WHERE id = ANY(%(ids)s::bigint[]) AND status <> 'queued';

-- name: requeue_releases
-- An operator's "inspect again", by release: queued, attempts reset (a live
-- lease is taken away; the next claim bumps the epoch, fencing its holder).
UPDATE inspection
   SET status = 'queued', node_id = NULL, done_at = NULL, attempts = 0, error = '',
       uncounted_releases = 0
 WHERE release_id = ANY(%(ids)s::bigint[]) AND status <> 'queued';

-- name: fail_inspections
UPDATE inspection
   SET status = 'failed', done_at = now(),
       error = CASE WHEN error = '' THEN left(%(reason)s, 2000) ELSE error END
 WHERE id = ANY(%(ids)s::bigint[]) AND status IN ('queued', 'leased');

-- name: plan_mark
-- Where planning is: new releases after after_id, the backlog below below_id.
SELECT after_id, below_id, mode FROM inspection_plan_mark WHERE id = 1;

-- name: set_plan_mark
INSERT INTO inspection_plan_mark (id, after_id, below_id, mode)
VALUES (1, %(after_id)s, %(below_id)s, %(mode)s)
ON CONFLICT (id) DO UPDATE
   SET after_id = excluded.after_id, below_id = excluded.below_id, mode = excluded.mode;

-- name: forget_plan_mark
DELETE FROM inspection_plan_mark;

-- name: releases_below
-- The backlog: releases below the mark, newest (highest id) first.
SELECT id, name, category, last_posted, segments_present
  FROM catalog_release
 WHERE id < %(below_id)s
 ORDER BY id DESC
 LIMIT %(limit)s;

-- name: releases_after
-- The next releases in id order (the primary key), with what planning decides on.
SELECT id, name, category, last_posted, segments_present
  FROM catalog_release
 WHERE id > %(after_id)s
 ORDER BY id
 LIMIT %(limit)s;

-- name: last_release_id
SELECT coalesce(max(id), 0) AS id FROM catalog_release;

-- name: release_files
-- The files of some releases, with only what the choice of articles reads:
-- the first segment of each, and every segment of an nfo (in part order).
SELECT f.release_id, f.group_id, f.name, f.bytes,
       f.message_ids[array_position(f.parts, 1)] AS first_id,
       f.sizes[array_position(f.parts, 1)] AS first_size,
       CASE WHEN lower(right(f.name, 4)) = '.nfo' THEN f.parts END AS parts,
       CASE WHEN lower(right(f.name, 4)) = '.nfo' THEN f.message_ids END AS message_ids,
       CASE WHEN lower(right(f.name, 4)) = '.nfo' THEN f.sizes END AS sizes
  FROM catalog_file AS f
 WHERE f.release_id = ANY(%(ids)s::bigint[]);

-- name: insert_inspections
-- One row per release; a release already planned keeps its row.
INSERT INTO inspection (release_id, group_id, posted, articles, status, epoch, attempts,
                        uncounted_releases, error, planned_at, planned_segments, created_at)
SELECT p.release_id, p.group_id, p.posted, p.articles, 'queued', 0, 0, 0, '', now(),
       p.segments, now()
  FROM unnest(%(release_ids)s::bigint[], %(group_ids)s::bigint[], %(posted)s::timestamptz[],
              %(articles)s::jsonb[], %(segments)s::bigint[])
       AS p(release_id, group_id, posted, articles, segments)
 WHERE EXISTS (SELECT 1 FROM catalog_release AS r WHERE r.id = p.release_id)
ON CONFLICT (release_id) DO NOTHING;

-- name: changed_queued
-- Queued rows whose release changed (segments joined it) since they were planned.
SELECT i.id, i.release_id
  FROM inspection AS i
  JOIN catalog_release AS r ON r.id = i.release_id
 WHERE i.status = 'queued' AND r.segments_present <> i.planned_segments
 ORDER BY i.id
 LIMIT %(limit)s;

-- name: refresh_inspections
-- New articles for queued rows (a row leased meanwhile keeps what it was handed).
UPDATE inspection AS i
   SET articles = p.articles, group_id = p.group_id, posted = p.posted, planned_at = now(),
       planned_segments = p.segments
  FROM unnest(%(ids)s::bigint[], %(group_ids)s::bigint[], %(posted)s::timestamptz[],
              %(articles)s::jsonb[], %(segments)s::bigint[])
       AS p(id, group_id, posted, articles, segments)
 WHERE i.id = p.id AND i.status = 'queued';

-- name: releases_by_id
SELECT id, name, category, last_posted, segments_present
  FROM catalog_release WHERE id = ANY(%(ids)s::bigint[]);

-- name: refresh_releases
-- refresh_inspections by release (queued rows only).
UPDATE inspection AS i
   SET articles = p.articles, group_id = p.group_id, posted = p.posted, planned_at = now(),
       planned_segments = p.segments
  FROM unnest(%(release_ids)s::bigint[], %(group_ids)s::bigint[], %(posted)s::timestamptz[],
              %(articles)s::jsonb[], %(segments)s::bigint[])
       AS p(release_id, group_id, posted, articles, segments)
 WHERE i.release_id = p.release_id AND i.status = 'queued';
