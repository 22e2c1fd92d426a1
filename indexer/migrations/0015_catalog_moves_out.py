"""The catalog's models move to the catalog app (catalog 0001): state only, same tables."""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("indexer", "0014_release_near")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="CatalogFile"),
                migrations.DeleteModel(name="GroupCatalogSummary"),
                migrations.DeleteModel(name="Release"),
                migrations.DeleteModel(name="RuleSetVersion"),
            ],
        ),
    ]
