-- The lane each hand-out came from (lane_handout.lane), for the takeover's
-- reset and the snapshot's clean-up. Run by leases' migration 0010 only; a
-- block a migration has run is never edited.

-- name: fill_handout_lanes
-- Hand-outs recorded before the lane was: the lane by the range's priority
-- against the tail bound saved for the trigger (the tail lane works ranges at
-- or more urgent than it, the history lane every other range it was given).
-- A hand-out whose range is gone, or without saved bounds (no lane was ever
-- handed out), is dropped.
UPDATE lane_handout AS h
   SET lane = CASE WHEN r.priority <= c.tail_max THEN 'tail' ELSE 'history' END
  FROM seed_range AS r, group_lane_config AS c
 WHERE r.id = h.range_id AND c.id = 1;
DELETE FROM lane_handout WHERE lane IS NULL;
