"""An index of catalog_release by the season its name gives, for season packs."""

from django.db import migrations

from newznab.sql import queries


class Migration(migrations.Migration):
    dependencies = [("newznab", "0003_release_posted_brin")]

    operations = [
        migrations.RunSQL(queries["create_release_season"], queries["drop_release_season"]),
    ]
