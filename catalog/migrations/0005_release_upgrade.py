"""What lets an upgraded catalog serve its releases at once and catch up by itself.

- `counted` (catalog_release): false on every release stored before this
  migration (the column is added with a constant default, so no row is
  rewritten), true on every later one (the default is then set to true).
  Until the upkeep counts a release again (catalog.release_backfill), search
  and RSS serve it when its stored totals say it is complete
  (`catalog_release_served`), as they did before the upgrade.
- A partial index of the releases not counted again yet, built CONCURRENTLY:
  the upkeep finds its next batch by it and reads its size as an estimate.
- catalog_release_backfill: where the upkeep's backfill of the name fields is
  (the parser version it reads for, the last id read, the highest id to read).
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models

from catalog.sql import queries


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("catalog", "0004_release_listing"),
    ]

    operations = [
        migrations.AddField(
            model_name="release",
            name="counted",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AlterField(
            model_name="release",
            name="counted",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.CreateModel(
            name="ReleaseBackfill",
            fields=[
                ("name", models.TextField(primary_key=True, serialize=False)),
                ("version", models.SmallIntegerField()),
                ("after", models.BigIntegerField()),
                ("upto", models.BigIntegerField()),
            ],
            options={
                "verbose_name": "release backfill position",
                "db_table": "catalog_release_backfill",
            },
        ),
        migrations.RunSQL(
            queries["release_served"],
            "DROP FUNCTION catalog_release_served(boolean, boolean, integer, integer, bigint,"
            " bigint)",
        ),
        AddIndexConcurrently(
            model_name="release",
            index=models.Index(
                fields=["id"],
                condition=models.Q(("counted", False)),
                name="catalog_release_uncounted_idx",
            ),
        ),
    ]
