"""What inspection finds on a release (issue 26, catalog.inspection).

Columns without a default or with a constant one: adding them rewrites no
row. The two partial indexes (the releases that carry an IMDb or TVDB id,
newest first: t=movie&imdbid=, t=tvsearch&tvdbid= and caps) are built
CONCURRENTLY, so a catalog of millions of releases is never locked. The
permission to ask for a release to be inspected again (the admin's action).
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("catalog", "0005_release_upgrade"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="release",
            options={
                "ordering": ["-posted", "-id"],
                "permissions": [
                    ("reinspect_release", "Can ask for a release to be inspected again")
                ],
                "verbose_name": "release",
            },
        ),
        migrations.AddField(
            model_name="release",
            name="encrypted",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name="release",
            name="imdb_id",
            field=models.TextField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="release",
            name="inspected_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="release",
            name="inspection",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="release",
            name="passworded",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddField(
            model_name="release",
            name="posted_name",
            field=models.TextField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="release",
            name="real_names",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="release",
            name="tvdb_id",
            field=models.IntegerField(blank=True, null=True),
        ),
        AddIndexConcurrently(
            model_name="release",
            index=models.Index(
                condition=models.Q(("imdb_id__isnull", False)),
                fields=["imdb_id", "-posted", "-id"],
                name="catalog_release_imdb_idx",
            ),
        ),
        AddIndexConcurrently(
            model_name="release",
            index=models.Index(
                condition=models.Q(("tvdb_id__isnull", False)),
                fields=["tvdb_id", "-posted", "-id"],
                name="catalog_release_tvdb_idx",
            ),
        ),
    ]
