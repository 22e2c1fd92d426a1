-- Group leases (window indexing). Every statement about a held lane names
-- the node and the lane's epoch, so a stale holder changes nothing. Which
-- lane a range belongs to is group_lane_of(priority, capture, bounds) with
-- the bounds passed from the settings (see leases/lanes.py). Time is the
-- database's now().

-- name: lock_group_leases
-- Hand-outs of group lanes are serialized; the lock ends with the transaction.
SELECT pg_advisory_xact_lock(%(key)s) AS locked;

-- name: lane_config
SELECT tail_max, history_min, history_max, capture_only FROM group_lane_config WHERE id = 1;

-- name: save_lane_config
INSERT INTO group_lane_config (id, tail_max, history_min, history_max, capture_only)
VALUES (1, %(tail_max)s, %(history_min)s, %(history_max)s, %(capture_only)s)
ON CONFLICT (id) DO UPDATE
   SET tail_max = excluded.tail_max, history_min = excluded.history_min,
       history_max = excluded.history_max, capture_only = excluded.capture_only;

-- name: lock_ranges_for_rebuild
-- Writers of seed_range wait while the lane summaries are rebuilt (the
-- trigger would otherwise count their changes twice or not at all).
LOCK TABLE seed_range IN SHARE MODE;

-- name: clear_lane_work
DELETE FROM group_lane_work;

-- name: fill_lane_work
INSERT INTO group_lane_work (group_id, lane, priority, ranges, articles,
                             claimable_ranges, claimable_articles)
SELECT group_id, lane, priority, count(*), sum(end_id - start_id + 1),
       count(*) FILTER (WHERE status = 'queued' AND next_id <= end_id),
       coalesce(sum(end_id - next_id + 1) FILTER (WHERE status = 'queued' AND next_id <= end_id), 0)
  FROM (SELECT group_id, priority, start_id, end_id, next_id, status,
               group_lane_of(priority, capture, %(tail_max)s, %(history_min)s,
                             %(history_max)s, %(capture_only)s) AS lane
          FROM seed_range
         WHERE status IN ('queued', 'leased')) AS open_ranges
 WHERE lane IS NOT NULL
 GROUP BY 1, 2, 3;

-- name: create_worked_lanes
-- In group order (the group choice breaks its last tie by the group's id,
-- never by the lane row's, so the order rows are made in does not matter).
INSERT INTO group_lane (group_id, lane)
SELECT w.group_id, w.lane
  FROM group_lane_work AS w
  JOIN news_group AS g ON g.id = w.group_id
 GROUP BY w.group_id, w.lane
 ORDER BY w.group_id, w.lane
ON CONFLICT (group_id, lane) DO NOTHING;

-- name: summarize_lanes
UPDATE group_lane AS gl
   SET planned_articles = coalesce(s.planned, 0), urgent_priority = s.urgent,
       claimable_articles = coalesce(s.claimable, 0), claimable_priority = s.claimable_urgent
  FROM group_lane AS k
  LEFT JOIN (SELECT group_id, lane, sum(articles) AS planned, min(priority) AS urgent,
                    coalesce(sum(claimable_articles) FILTER (WHERE claimable_ranges > 0), 0)
                        AS claimable,
                    min(priority) FILTER (WHERE claimable_ranges > 0) AS claimable_urgent
               FROM group_lane_work
              WHERE ranges > 0
              GROUP BY 1, 2) AS s
    ON s.group_id = k.group_id AND s.lane = k.lane
 WHERE gl.id = k.id
   AND (gl.planned_articles IS DISTINCT FROM coalesce(s.planned, 0)
        OR gl.urgent_priority IS DISTINCT FROM s.urgent
        OR gl.claimable_articles IS DISTINCT FROM coalesce(s.claimable, 0)
        OR gl.claimable_priority IS DISTINCT FROM s.claimable_urgent);

-- name: next_turn
SELECT nextval('group_lane_turn_seq') AS turn;

-- name: pick_most_planned
-- The free lane with something to claim (sql/migrations/claimable.sql) whose
-- most urgent claimable range is the most urgent, then the most articles
-- left to claim, then the most urgent group, then the lower group id: an
-- index probe on group_lane_largest_idx; held lanes are filtered on the way.
SELECT id
  FROM group_lane_free(%(lane)s, %(ttl)s)
 ORDER BY lane, claimable_priority, claimable_articles DESC, group_priority, group_id
 LIMIT 1;

-- name: pick_unheld_longest
-- As pick_most_planned, then the lane whose holder was heard from the
-- longest ago (its last heartbeat; never held first), then the most urgent
-- group, then the lower group id: group_lane_unheard_idx.
SELECT id
  FROM group_lane_free(%(lane)s, %(ttl)s)
 ORDER BY lane, claimable_priority, heartbeat_at ASC NULLS FIRST, group_priority, group_id
 LIMIT 1;

-- name: lock_free_lane
-- The chosen lane as it was before this hand-out (its last holder and range
-- in work), locked, and only while it is still free.
SELECT gl.group_id, gl.node_id, gl.range_id
  FROM group_lane AS gl
 WHERE gl.id = %(lane_id)s
   AND (gl.node_id IS NULL OR gl.heartbeat_at < now() - make_interval(secs => %(ttl)s))
   FOR UPDATE;

-- name: reset_lane_ranges
-- What the lane's snapshot does not cover is queued again. Only ranges whose
-- progress came from this lane's window (lane_handout of this lane at the
-- range's epoch) are touched, whatever lane the bounds in force now would
-- put them in: a range lease's resume point is exact and stays. From the
-- snapshot's article on, the window's ranges (the last holder's ranges in
-- work: the one it reads and one read to its end whose finish had not come;
-- quiet leases, done since the snapshot, or read past it) restart at
-- max(start, snapshot next), and their counters go back to what that point
-- had counted: zero from the range's start, the snapshot's record for the
-- range it was taken in (kept as they were when there is no record). A range
-- done before the snapshot stays done. Without a snapshot, the window's
-- leased ranges are queued at their resume points. A leased range left read
-- to its end before the snapshot (or without one) is done, never queued
-- empty, keeps its reader as holder (it counts as finished there) and no
-- error (a done range did not fail). A
-- leased range whose hand-out was its max_attempts-th fails instead of going
-- back to the queue, as a quiet range lease does: a range that kills every
-- window reading it cannot loop the lane's workers forever. Finished ranges
-- that go back are taken off the lane's own counters, which count them again
-- when they finish again.
WITH lane AS (
    SELECT id, snapshot_next AS s, snapshot_at, snapshot_range_id, snapshot_headers,
           snapshot_files, snapshot_fragments
      FROM group_lane
     WHERE group_id = %(group_id)s AND lane = %(lane)s
), worked AS (
    SELECT r.id, r.status AS was, r.headers AS was_headers,
           lane.s IS NOT NULL AND r.end_id >= lane.s AS rewound,
           CASE WHEN (lane.s IS NULL OR r.end_id < lane.s) AND r.next_id > r.end_id THEN 'done'
                WHEN r.status = 'leased' AND r.attempts >= %(max_attempts)s THEN 'failed'
                ELSE 'queued' END AS becomes
      FROM lane, lane_handout AS h
      JOIN seed_range AS r ON r.id = h.range_id AND r.epoch = h.epoch
     WHERE h.lane = %(lane)s
       AND r.group_id = %(group_id)s
       AND (
            (r.status = 'leased'
             AND (r.node_id = %(last_holder)s
                  OR r.heartbeat_at < now() - make_interval(secs => %(ttl)s)))
         OR (lane.s IS NOT NULL
             AND r.end_id >= lane.s
             AND ((r.status = 'done' AND r.done_at > lane.snapshot_at)
                  OR (r.status = 'queued' AND r.next_id > GREATEST(r.start_id, lane.s))))
       )
       FOR UPDATE OF r
), reset AS (
    UPDATE seed_range AS r
       SET status = w.becomes,
           node_id = CASE WHEN w.becomes = 'queued' THEN NULL ELSE r.node_id END,
           done_at = CASE w.becomes WHEN 'done' THEN coalesce(r.done_at, now())
                                    WHEN 'failed' THEN now() END,
           error = CASE WHEN w.becomes = 'done' THEN ''
                        WHEN w.becomes = 'failed' AND r.error = ''
                        THEN 'the lease went quiet ' || r.attempts || ' times (the last in a '
                             || %(lane)s || ' lane''s window)'
                        ELSE r.error END,
           next_id = CASE WHEN w.rewound THEN GREATEST(r.start_id, lane.s) ELSE r.next_id END,
           headers = CASE WHEN NOT w.rewound THEN r.headers
                          WHEN r.start_id >= lane.s THEN 0
                          WHEN r.id = lane.snapshot_range_id THEN lane.snapshot_headers
                          ELSE r.headers END,
           files = CASE WHEN NOT w.rewound THEN r.files
                        WHEN r.start_id >= lane.s THEN 0
                        WHEN r.id = lane.snapshot_range_id THEN lane.snapshot_files
                        ELSE r.files END,
           fragments = CASE WHEN NOT w.rewound THEN r.fragments
                            WHEN r.start_id >= lane.s THEN 0
                            WHEN r.id = lane.snapshot_range_id THEN lane.snapshot_fragments
                            ELSE r.fragments END
      FROM worked AS w, lane
     WHERE r.id = w.id
    RETURNING w.was, w.was_headers
)
UPDATE group_lane AS gl
   SET ranges_done = GREATEST(gl.ranges_done - done.ranges, 0),
       headers = GREATEST(gl.headers - done.headers, 0)
  FROM lane, (SELECT count(*) AS ranges, coalesce(sum(was_headers), 0) AS headers
                FROM reset WHERE was = 'done') AS done
 WHERE gl.id = lane.id AND done.ranges > 0;

-- name: take_lane
-- last_held_at takes the clock, not the transaction's start: hand-outs and
-- releases inside one transaction still order.
UPDATE group_lane AS gl
   SET node_id = %(node_id)s, epoch = gl.epoch + 1, leased_at = now(), heartbeat_at = now(),
       last_held_at = clock_timestamp(), range_id = NULL
  FROM news_group AS g
 WHERE gl.id = %(lane_id)s AND g.id = gl.group_id
RETURNING gl.group_id, g.name, g.priority, gl.epoch, gl.snapshot_next, gl.snapshot_size;

-- name: touch_lane
-- The holder's heartbeat; answers with the lane's range in work.
UPDATE group_lane
   SET heartbeat_at = now()
 WHERE group_id = %(group_id)s AND lane = %(lane)s AND node_id = %(node_id)s AND epoch = %(epoch)s
RETURNING id, range_id;

-- name: lane_holder
-- Only read when a fenced statement matched nothing, to say why.
SELECT g.id, gl.node_id, gl.epoch
  FROM news_group AS g
  LEFT JOIN group_lane AS gl ON gl.group_id = g.id AND gl.lane = %(lane)s
 WHERE g.id = %(group_id)s;

-- name: next_lane_range
-- The holder's own range in work while it is leased to it; otherwise the
-- lane's lowest queued range in article order, claimed in one statement.
-- Only queued ranges with articles left are claimed, so a range under a
-- live range lease is never taken, nor an empty span.
WITH own AS (
    SELECT id FROM seed_range
     WHERE id = %(range_id)s AND group_id = %(group_id)s
       AND status = 'leased' AND node_id = %(node_id)s
), pick AS (
    SELECT r.id
      FROM seed_range AS r
     WHERE r.group_id = %(group_id)s
       AND r.status = 'queued'
       AND r.next_id <= r.end_id
       AND group_lane_of(r.priority, r.capture, %(tail_max)s, %(history_min)s,
                         %(history_max)s, %(capture_only)s) = %(lane)s
       AND NOT EXISTS (SELECT 1 FROM own)
     ORDER BY r.start_id, r.id
     LIMIT 1
       FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE seed_range AS r
       SET status = 'leased',
           node_id = %(node_id)s,
           epoch = r.epoch + 1,
           attempts = r.attempts + 1,
           leased_at = now(),
           heartbeat_at = now(),
           rule_version = %(rule_version)s
      FROM pick
     WHERE r.id = pick.id
    RETURNING r.id, r.start_id, r.end_id, r.next_id, r.epoch
), handout AS (
    INSERT INTO lane_handout (range_id, epoch, lane)
    SELECT id, epoch, %(lane)s FROM claimed
    ON CONFLICT (range_id) DO UPDATE SET epoch = excluded.epoch, lane = excluded.lane
)
SELECT id, start_id, end_id, next_id, epoch FROM claimed
UNION ALL
SELECT r.id, r.start_id, r.end_id, r.next_id, r.epoch FROM seed_range AS r JOIN own ON own.id = r.id;

-- name: set_lane_range
-- The lane's range in work; a range handed out widens the articles the lane
-- has handed out (LEAST and GREATEST pass over NULLs: no range, or the first).
UPDATE group_lane
   SET range_id = %(range_id)s,
       handed_first = LEAST(handed_first, %(start)s::bigint),
       handed_last = GREATEST(handed_last, %(end)s::bigint)
 WHERE id = %(lane_id)s;

-- name: release_lane
-- The holder gives its lane back (group_lane_give_back, leases/sql/migrations/
-- give_back.sql): the answer is 1 lane when it was this node's at this epoch.
SELECT lanes, ranges FROM group_lane_give_back(
    ARRAY(SELECT id FROM group_lane WHERE group_id = %(group_id)s AND lane = %(lane)s),
    ARRAY[%(node_id)s]::bigint[], %(epoch)s, false);

-- name: force_release_lanes
-- Lanes taken back, named by id (an operator: whoever holds them) or by
-- holder (disabled nodes: only while they still hold them). Fenced: the
-- epoch moves on (group_lane_give_back).
SELECT lanes, ranges FROM group_lane_give_back(
    ARRAY(SELECT id FROM group_lane WHERE id = ANY(%(ids)s::bigint[])
          UNION ALL
          SELECT id FROM group_lane WHERE node_id = ANY(%(node_ids)s::bigint[])),
    %(holders)s::bigint[], NULL, true);

-- name: lanes_held
-- A node's live lanes (heartbeat within the TTL), counted against LEASE_MAX_PER_NODE,
-- and whether it was disabled (or removed) by another process while this one
-- keeps its token (TOKEN_CACHE_SECONDS): its lanes were freed, none is handed out.
SELECT count(*) AS held,
       coalesce((SELECT n.disabled FROM seed_node AS n WHERE n.id = %(node_id)s),
                true) AS disabled
  FROM group_lane
 WHERE node_id = %(node_id)s AND heartbeat_at >= now() - make_interval(secs => %(ttl)s);

-- name: count_finished_range
-- A range a lane handed out was finished: count it on the lane whose hand-out
-- it still is (the range's epoch; a range lease since bumped it). Not only the
-- lane's range in work: the holder finishes a range after its `next` (naming
-- the range read) has moved the lane on.
UPDATE group_lane AS gl
   SET ranges_done = gl.ranges_done + 1, headers = gl.headers + %(headers)s
  FROM lane_handout AS h
  JOIN seed_range AS r ON r.id = h.range_id AND r.epoch = h.epoch
 WHERE h.range_id = %(range_id)s
   AND gl.group_id = %(group_id)s AND gl.lane = h.lane;

-- name: lock_lane_snapshot
-- The holder's lane, locked while its snapshot file is replaced.
SELECT gl.id, g.name, gl.snapshot_key
  FROM group_lane AS gl
  JOIN news_group AS g ON g.id = gl.group_id
 WHERE gl.group_id = %(group_id)s AND gl.lane = %(lane)s
   AND gl.node_id = %(node_id)s AND gl.epoch = %(epoch)s
   FOR UPDATE OF gl;

-- name: record_snapshot
-- With the range in work's counters when its `next` is the snapshot's
-- article (NULLs otherwise). Hand-outs of this lane's ranges wholly before
-- the snapshot are no longer needed by its takeover, except while the range
-- is still leased at that hand-out (the takeover queues it, the range claim's
-- mix tells it from a range lease). The other lane's hand-outs are its own.
WITH lane AS (
    UPDATE group_lane AS gl
       SET snapshot_next = %(next)s, snapshot_size = %(size)s, snapshot_at = now(),
           snapshot_key = %(key)s, heartbeat_at = now(),
           (snapshot_range_id, snapshot_headers, snapshot_files, snapshot_fragments) = (
               SELECT r.id, r.headers, r.files, r.fragments
                 FROM seed_range AS r
                WHERE r.id = gl.range_id AND r.start_id < %(next)s AND r.next_id = %(next)s)
     WHERE gl.id = %(lane_id)s
    RETURNING gl.group_id, gl.lane
)
DELETE FROM lane_handout AS h
 USING seed_range AS r, lane
 WHERE r.id = h.range_id AND r.group_id = lane.group_id AND h.lane = lane.lane
   AND r.end_id < %(next)s
   AND NOT (r.status = 'leased' AND r.epoch = h.epoch);

-- name: read_lane_snapshot
-- Shared lock: a snapshot being replaced is read whole, before or after.
SELECT gl.id, g.name, gl.snapshot_next, gl.snapshot_size, gl.snapshot_key
  FROM group_lane AS gl
  JOIN news_group AS g ON g.id = gl.group_id
 WHERE gl.group_id = %(group_id)s AND gl.lane = %(lane)s
   AND gl.node_id = %(node_id)s AND gl.epoch = %(epoch)s
   FOR SHARE OF gl;

-- name: lanes_status
-- Lanes that are held or have done anything; live holders first.
SELECT g.name AS "group",
       gl.lane,
       n.name AS holder,
       gl.epoch,
       gl.range_id AS "range",
       gl.snapshot_next,
       extract(epoch FROM now() - gl.snapshot_at)::bigint AS snapshot_age_seconds,
       gl.snapshot_size,
       gl.ranges_done,
       gl.headers,
       (gl.node_id IS NOT NULL AND gl.heartbeat_at >= now() - make_interval(secs => %(ttl)s)) AS live
  FROM group_lane AS gl
  JOIN news_group AS g ON g.id = gl.group_id
  LEFT JOIN seed_node AS n ON n.id = gl.node_id
 WHERE gl.node_id IS NOT NULL OR gl.snapshot_at IS NOT NULL OR gl.ranges_done > 0
 ORDER BY live DESC, g.name, gl.lane
 LIMIT %(limit)s;
