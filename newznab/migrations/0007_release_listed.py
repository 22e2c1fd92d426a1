"""The newest listed releases (the RSS feed, the category browse, deep offsets):
an index of the listed releases by date with their category.

Built CONCURRENTLY (a 10M-row catalog is not locked while it builds), so the
migration is not atomic; a build that failed half-way is dropped and built
again when the migration is run again.
"""

from django.db import migrations

from newznab.migrations._concurrently import built_concurrently


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("newznab", "0006_release_title"),
    ]

    operations = built_concurrently("release_listed_index")
