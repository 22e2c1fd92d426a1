"""A rare category's newest listed releases: the listed releases by category and date.

Built CONCURRENTLY (a 10M-row catalog is not locked while it builds), so the
migration is not atomic; a build that failed half-way is dropped and built
again when the migration is run again.
"""

from django.db import migrations

from newznab.migrations._concurrently import built_concurrently


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("newznab", "0007_release_listed"),
    ]

    operations = built_concurrently("release_listed_category_index")
