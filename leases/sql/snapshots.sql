-- What a lane's snapshot may hold, and the guard that lets one upload of a
-- lane run at a time (leases/snapshots.py, leases/upload_guard.py).

-- name: lane_article_span
-- The first and last article of the group's ranges that belong to the lane
-- (whatever their status: the window carries files across finished ranges);
-- NULLs when none does. Walks the group's ranges by seed_range_group_start_idx.
SELECT min(r.start_id) AS first, max(r.end_id) AS last
  FROM seed_range AS r
 WHERE r.group_id = %(group_id)s
   AND group_lane_of(r.priority, r.capture, %(tail_max)s, %(history_min)s,
                     %(history_max)s, %(capture_only)s) = %(lane)s;

-- name: prepare_upload_guard
-- The guards' session ends when it has been idle this long: a host that died
-- mid-upload without closing its connection frees its lanes' guards then.
SELECT set_config('idle_session_timeout', %(idle_ms)s::text, false) AS idle;

-- name: take_upload_guard
-- A session lock per lane (two-key form: no other lock of the project uses
-- this class); false while another session holds it.
SELECT pg_try_advisory_lock(hashtext('leases.snapshot_upload'), %(key)s::int) AS taken;

-- name: free_upload_guard
SELECT pg_advisory_unlock(hashtext('leases.snapshot_upload'), %(key)s::int) AS freed;

-- name: keep_upload_guard
-- Any statement keeps the session from going idle.
SELECT 1 AS kept;
