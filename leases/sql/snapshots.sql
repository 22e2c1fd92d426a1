-- What a lane's snapshot may hold, and the guard that lets one upload of a
-- lane run at a time (leases/snapshots.py, leases/upload_guard.py).

-- name: lane_article_span
-- The first and last article of the ranges the lane's `next` has handed out
-- (set_lane_range keeps them, whatever the ranges' status or lane now: the
-- window carries files across finished ranges); NULLs before the first.
SELECT gl.handed_first AS first, gl.handed_last AS last
  FROM group_lane AS gl
 WHERE gl.group_id = %(group_id)s AND gl.lane = %(lane)s;

-- name: prepare_upload_guard
-- The guards' session ends when it has been idle this long: a host that died
-- mid-upload without closing its connection frees its lanes' guards then.
SELECT set_config('idle_session_timeout', %(idle_ms)s::text, false) AS idle;

-- name: take_upload_guard
-- A session lock per lane and epoch (two-key form: no other lock of the
-- project uses this class); false while another session holds it.
SELECT pg_try_advisory_lock(hashtext('leases.snapshot_upload'), %(key)s::int) AS taken;

-- name: free_upload_guard
SELECT pg_advisory_unlock(hashtext('leases.snapshot_upload'), %(key)s::int) AS freed;

-- name: keep_upload_guard
-- Any statement keeps the session from going idle.
SELECT 1 AS kept;

-- name: fenced_upload_guards
-- Of the uploads in flight (their lock keys, lane rows, holders and epochs),
-- those whose node no longer holds the lane at that epoch: the upload is
-- stopped at its next chunk. Run by the guards' keeper, which also keeps the
-- session from going idle this way.
SELECT u.key
  FROM unnest(%(keys)s::int[], %(lane_ids)s::bigint[], %(node_ids)s::bigint[],
              %(epochs)s::int[]) AS u(key, lane_id, node_id, epoch)
 WHERE NOT EXISTS (SELECT 1 FROM group_lane AS gl
                    WHERE gl.id = u.lane_id AND gl.node_id = u.node_id
                      AND gl.epoch = u.epoch);

-- name: retire_snapshot_object
-- An object the upload being recorded replaces: deleted by the upkeep once
-- its presigned URLs have expired, not at once (a node may be following one).
INSERT INTO lane_snapshot_retired (key) VALUES (%(key)s) ON CONFLICT (key) DO NOTHING;

-- name: expired_snapshot_objects
-- Retired objects whose every presigned URL has expired, oldest first.
SELECT key FROM lane_snapshot_retired
 WHERE retired_at < now() - make_interval(secs => %(seconds)s)
 ORDER BY retired_at
 LIMIT %(limit)s;

-- name: forget_snapshot_objects
DELETE FROM lane_snapshot_retired WHERE key = ANY(%(keys)s::text[]);
