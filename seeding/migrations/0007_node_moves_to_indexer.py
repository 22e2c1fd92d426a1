"""Seed nodes now belong to the indexer app (indexer 0006): state only, same table."""

from __future__ import annotations

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    # leases 0003 moves its own foreign key first (it names this one in run_before).
    dependencies = [("seeding", "0006_claim_function"), ("indexer", "0006_node")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="seedrange",
                    name="node",
                    field=models.ForeignKey(
                        blank=True, db_index=False, null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="ranges", to="indexer.node",
                    ),
                ),
                migrations.AlterField(
                    model_name="headerrollup",
                    name="node",
                    field=models.ForeignKey(
                        db_index=False, on_delete=django.db.models.deletion.CASCADE,
                        to="indexer.node",
                    ),
                ),
                migrations.DeleteModel(name="Node"),
            ],
        ),
    ]
