-- The articles each lane has handed out (group_lane.handed_first/last), for
-- the snapshot checks. Run by leases' migration 0015 only; a block a
-- migration has run is never edited.

-- name: fill_handed_spans
-- Lanes from before the span was kept: the ranges their `next` handed out
-- that the table still records (lane_handout), the range in work, and every
-- range the lane bounds saved for the trigger put in the lane that starts
-- before its snapshot (the window read up to there; lane_handout forgets
-- hand-outs wholly before a snapshot). Without saved bounds no lane was ever
-- handed out, and nothing is filled.
UPDATE group_lane AS gl
   SET handed_first = s.first, handed_last = s.last
  FROM (SELECT l.id, min(r.start_id) AS first, max(r.end_id) AS last
          FROM group_lane AS l
         CROSS JOIN group_lane_config AS c
          JOIN seed_range AS r ON r.group_id = l.group_id
         WHERE c.id = 1
           AND (r.id = l.range_id
                OR EXISTS (SELECT 1 FROM lane_handout AS h
                            WHERE h.range_id = r.id AND h.lane = l.lane)
                OR (r.start_id < l.snapshot_next
                    AND group_lane_of(r.priority, r.capture, c.tail_max, c.history_min,
                                      c.history_max, c.capture_only) = l.lane))
         GROUP BY l.id) AS s
 WHERE gl.id = s.id;
