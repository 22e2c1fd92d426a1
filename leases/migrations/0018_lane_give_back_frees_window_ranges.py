"""A lane given back frees every range its holder still has leased from the lane's
window, not only the one in work (group_lane_give_back, sql/migrations/give_back.sql):
after `next` with `read=N` moved the lane on, range N stayed leased to the old holder
until its TTL and was read again out of window order.
"""

from __future__ import annotations

from django.db import migrations

from leases.sql import queries


class Migration(migrations.Migration):
    dependencies = [("leases", "0017_crowded_claim_lane_order")]
    operations = [
        migrations.RunSQL(
            queries["create_window_lane_give_back_function"],
            queries["create_clean_lane_give_back_function"],
        )
    ]
