"""The range claim and its hooks, read from sql/migrations/claim.sql.

The claim skips ranges under a live hold (the `seed_range_hold` view) and
leaves a crowded queue to `seed_range_pick_unheld`; both hold nothing here,
and the leases app's migrations replace them (docs/architecture.md).
"""

from __future__ import annotations

from django.db import migrations

from seeding.sql import queries

FORWARD = "\n".join([
    queries["drop_lane_aware_claim_function"],
    queries["create_range_hold_view"],
    queries["create_pick_unheld_function"],
    queries["create_first_claimable_function"],
    queries["create_claim_function"],
])


class Migration(migrations.Migration):
    dependencies = [("seeding", "0007_node_moves_to_indexer")]
    operations = [migrations.RunSQL(FORWARD, queries["drop_claim_function"])]
