"""Held lanes keep range leases away: the claim's hooks filled from sql/migrations/holds.sql.

Backwards, seeding's empty hooks come back (nothing held).
"""

from __future__ import annotations

from django.db import migrations

from leases.sql import queries
from seeding.sql import queries as seeding_queries

BACKWARD = "\n".join([
    seeding_queries["create_range_hold_view"],
    queries["drop_pick_unheld_function"],
    seeding_queries["create_pick_unheld_function"],
])


class Migration(migrations.Migration):
    dependencies = [("leases", "0003_node_moves_to_indexer"), ("seeding", "0008_claim_hooks")]
    operations = [migrations.RunSQL(queries["create_lane_holds"], BACKWARD)]
