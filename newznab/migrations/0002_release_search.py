"""The release search: a tsvector column and its GIN index on catalog_release, grab counts."""

from django.db import migrations

from newznab.sql import queries


class Migration(migrations.Migration):
    dependencies = [
        ("newznab", "0001_initial"),
        ("indexer", "0011_releases"),
    ]

    operations = [
        migrations.RunSQL(queries["create_release_search"], queries["drop_release_search"]),
    ]
