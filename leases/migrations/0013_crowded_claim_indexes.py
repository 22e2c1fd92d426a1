"""The crowded claim reads a bounded number of index entries however long the queue
(sql/migrations/holds.sql): seed_range_uncaptured_idx serves the laneless search's capture
band under LEASE_CAPTURE_ONLY, and seed_range_lane_pick_idx a free lane's pick at its most
urgent priority, asked so that only that index serves it; each walked the queue before (the
history band's capture ranges; the group's ranges of other priorities).

Backwards, 0012's seed_range_pick_unheld comes back, then the indexes go.
"""

from __future__ import annotations

from django.db import migrations

from leases.sql import queries

FORWARD = "\n".join([
    queries["create_crowded_claim_indexes"],
    queries["probe_first_laneless_function"],
    queries["create_indexed_pick_unheld_function"],
])
BACKWARD = "\n".join([
    queries["create_pick_unheld_at_lanes_function"],
    queries["drop_crowded_claim_indexes"],
])


class Migration(migrations.Migration):
    dependencies = [("leases", "0012_claim_hooks_by_priority")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
