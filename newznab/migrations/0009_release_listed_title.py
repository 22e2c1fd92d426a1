"""A title's listed releases by date, for a word search whose words are a title.

Built CONCURRENTLY (a 10M-row catalog is not locked while it builds), so the
migration is not atomic; a build that failed half-way is dropped and built
again when the migration is run again.
"""

from django.db import migrations

from newznab.sql import queries


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("newznab", "0008_release_listed_category"),
    ]

    operations = [
        migrations.RunSQL(queries["drop_release_listed_title_index"], migrations.RunSQL.noop),
        migrations.RunSQL(
            queries["create_release_listed_title_index"],
            queries["drop_release_listed_title_index"],
        ),
    ]
