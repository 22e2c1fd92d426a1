"""group_lane_apply is gone: group_lane_apply_work replaced it in every trigger
(0008), and nothing calls it (leases/sql/migrations/tracking.sql)."""

from django.db import migrations

from leases.sql import queries


class Migration(migrations.Migration):
    dependencies = [("leases", "0015_snapshot_bounds")]

    operations = [
        migrations.RunSQL(queries["drop_unused_lane_apply"], queries["create_lane_apply_function"]),
    ]
