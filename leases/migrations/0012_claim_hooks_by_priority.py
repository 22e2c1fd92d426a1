"""The range claim's hooks for its urgency mix: the ranges a lane's `next` handed out
(seed_range_window_lease, from lane_handout), left out of the range leases the mix counts;
and the crowded claim's candidate asked from a priority on, which also finds ranges of no
lane (above LEASE_PRIORITY_MAX, or not flagged capture under LEASE_CAPTURE_ONLY): walking
only the free lanes, a crowded claim never handed those out (sql/migrations/holds.sql).

Backwards, seeding's empty hooks of 0012 and this app's one-argument hook of 0008 come back.
"""

from __future__ import annotations

from django.db import migrations

from leases.sql import queries
from seeding.sql import queries as seeding_queries

FORWARD = "\n".join([
    queries["create_window_leases"],
    queries["create_first_laneless_function"],
    queries["create_pick_unheld_at_lanes_function"],
])
BACKWARD = "\n".join([
    seeding_queries["create_window_lease_view"],
    seeding_queries["create_pick_unheld_at_function"],
    queries["drop_first_laneless_function"],
    queries["create_claimable_pick_unheld_function"],
])


class Migration(migrations.Migration):
    dependencies = [("leases", "0011_choice_ties_by_group"), ("seeding", "0012_claim_mix")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
