"""A title's listed releases by date, for a word search whose words are a title.

Built CONCURRENTLY (a 10M-row catalog is not locked while it builds), so the
migration is not atomic; a build that failed half-way is dropped and built
again when the migration is run again.
"""

from django.db import migrations

from newznab.migrations._concurrently import built_concurrently


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("newznab", "0008_release_listed_category"),
    ]

    operations = built_concurrently("release_listed_title_index")
