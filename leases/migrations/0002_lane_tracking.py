"""Keep each group lane's planned work current as seed ranges change.

- `group_lane_of(priority, capture, bounds...)`: which lane a range belongs
  to (NULL: none). An inlinable SQL function, so the range claim, the lane's
  `next` and the trigger classify ranges the same way.
- Triggers on seed_range feed deltas of open (queued or leased) ranges to
  `group_lane_apply`: statement-level with transition tables for INSERT and
  DELETE (bulk planning loads a million ranges in one statement), row-level
  for UPDATE with a WHEN clause that fires only when a range opens or closes
  or moves between lanes. queued <-> leased keeps a range open, so the range
  claim and a lane's `next` never fire it.
- `group_lane_apply` locks the group_lane rows first (every writer of a lane
  takes that row lock before anything else), adds the article deltas, then
  recomputes the lane's most urgent priority from group_lane_work under that
  lock, so concurrent writers never lose each other's changes.
- `group_lane_turn_seq` counts the turns of the group choice.
- A partial index serves the lane's `next`: a group's queued ranges in
  article order, without walking its done ranges.
"""

from __future__ import annotations

from django.db import migrations

from leases.sql import queries

# The statements are in sql/migrations/tracking.sql; a block run here is never edited.
FORWARD = "\n".join([
    queries["create_lane_of_function"],
    queries["create_lane_apply_function"],
    queries["create_lane_track_functions"],
    queries["create_lane_track_triggers"],
    queries["create_lane_queued_index"],
    queries["create_lane_turn_sequence"],
])
BACKWARD = queries["drop_lane_tracking"]


class Migration(migrations.Migration):
    dependencies = [("leases", "0001_initial"), ("seeding", "0002_seed_range_storage")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
