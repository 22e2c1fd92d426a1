"""The crowded range claim takes the free lanes in claim order from an index
(group_lane_claim_order_idx) when it asks for the whole queue, instead of
grouping every free lane's work rows: with 10,000 groups a claim read 40,000
rows and cost 40-70 ms while any lane was held (docs/performance.md, "Group
leases"). The index is built CONCURRENTLY (atomic = False): group_lane stays
writable while it builds.

Backwards, 0013's seed_range_pick_unheld comes back, then the index goes.
"""

from __future__ import annotations

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models

from leases.sql import queries


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("leases", "0016_drop_unused_lane_apply")]

    operations = [
        AddIndexConcurrently(
            model_name="grouplane",
            index=models.Index(
                models.F("claimable_priority"),
                models.OrderBy(models.F("claimable_articles"), descending=True),
                models.F("group"),
                models.F("lane"),
                condition=models.Q(("claimable_priority__isnull", False)),
                name="group_lane_claim_order_idx",
            ),
        ),
        migrations.RunSQL(
            queries["create_claim_order_pick_unheld_function"],
            queries["create_indexed_pick_unheld_function"],
        ),
    ]
