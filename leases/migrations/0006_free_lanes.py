"""The group choice's free lanes as one inlinable SQL function (sql/migrations/free_lanes.sql)."""

from __future__ import annotations

from django.db import migrations

from leases.sql import queries


class Migration(migrations.Migration):
    dependencies = [("leases", "0005_window_handouts")]
    operations = [
        migrations.RunSQL(
            queries["create_free_lanes_function"], queries["drop_free_lanes_function"]
        )
    ]
