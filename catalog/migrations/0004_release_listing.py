"""A file counted once per release however many groups hold it, `listed`
kept by the triggers, and the queue of releases waiting to settle.

- The release triggers count each file name of a release once, as its
  fullest copy (sql/migrations/releases.sql, `count_release_files_once`): a
  cross-posted release no longer reports its size twice. Stored releases keep
  their totals until `manage.py recount_releases` counts them again.
- A batch that completes a release lists it in its own transaction; one it
  leaves unlisted is queued in catalog_release_settling, which the upkeep
  reads by `touched_at` (catalog.release_counts.settle_releases).
"""

import django.db.models.deletion
from django.db import migrations, models

from catalog.sql import queries


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0003_release_file_copies"),
    ]

    operations = [
        migrations.CreateModel(
            name="ReleaseSettling",
            fields=[
                (
                    "release",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="catalog.release",
                    ),
                ),
                ("touched_at", models.DateTimeField(db_index=True)),
            ],
            options={
                "verbose_name": "release waiting to settle",
                "db_table": "catalog_release_settling",
            },
        ),
        migrations.RunSQL(
            queries["count_release_files_once"], queries["count_release_files_per_row"]
        ),
    ]
