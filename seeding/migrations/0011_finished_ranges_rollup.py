"""Every range made done counts in its holder's minute of the rollup, not only a finish:
a trigger on seed_range (sql/migrations/finished.sql), and finish_range no longer
writes the rollup itself.
"""

from __future__ import annotations

from django.db import migrations

from seeding.sql import queries


class Migration(migrations.Migration):
    dependencies = [("seeding", "0010_unread_claims_and_node_totals")]
    operations = [
        migrations.RunSQL(
            queries["create_finished_rollup_trigger"], queries["drop_finished_rollup_trigger"]
        )
    ]
