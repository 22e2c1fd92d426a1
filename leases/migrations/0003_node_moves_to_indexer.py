"""A lane's holder is an indexer.Node now (indexer 0006): state only, same table."""

from __future__ import annotations

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("leases", "0002_lane_tracking"), ("indexer", "0006_node")]
    # Before seeding drops its Node from the state, so no foreign key points at it.
    run_before = [("seeding", "0007_node_moves_to_indexer")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="grouplane",
                    name="node",
                    field=models.ForeignKey(
                        blank=True, db_index=False, null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="lanes", to="indexer.node", verbose_name="holder",
                    ),
                ),
            ],
        ),
    ]
