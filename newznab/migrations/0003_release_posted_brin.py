"""A BRIN index on catalog_release.posted for the newest-window search."""

from django.db import migrations

from newznab.sql import queries


class Migration(migrations.Migration):
    dependencies = [("newznab", "0002_release_search")]

    operations = [
        migrations.RunSQL(
            queries["create_release_posted_brin"], queries["drop_release_posted_brin"]
        ),
    ]
