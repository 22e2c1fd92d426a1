"""A lane given back by its holder and one taken back by an operator or from a disabled node
share one SQL function, group_lane_give_back (leases/sql/migrations/give_back.sql).
"""

from django.db import migrations

from leases.sql import queries


class Migration(migrations.Migration):

    dependencies = [
        ('leases', '0008_claimable_lanes'),
    ]

    operations = [
        migrations.RunSQL(
            queries["create_lane_give_back_function"],
            queries["drop_lane_give_back_function"],
        ),
    ]
