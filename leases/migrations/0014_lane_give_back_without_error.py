"""A lane given back with its range read to its end leaves that range done with no error
(group_lane_give_back, sql/migrations/give_back.sql): a done range did not fail, and
seeding's constraint of 0013 says so.
"""

from __future__ import annotations

from django.db import migrations

from leases.sql import queries


class Migration(migrations.Migration):
    dependencies = [
        ("leases", "0013_crowded_claim_indexes"),
        ("seeding", "0013_done_ranges_without_error"),
    ]
    operations = [
        migrations.RunSQL(
            queries["create_clean_lane_give_back_function"],
            "\n".join([
                queries["drop_lane_give_back_function"],
                queries["create_lane_give_back_function"],
            ]),
        )
    ]
