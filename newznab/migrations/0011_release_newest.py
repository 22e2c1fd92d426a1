"""The newest listed releases read from their indexes alone again: the indexes of
migrations 0007 and 0008 with whether a release is passworded (every search now
tests it), which replace them.

Built CONCURRENTLY (a 10M-row catalog is not locked while it builds), so the
migration is not atomic; a build that failed half-way is dropped and built
again when the migration is run again. The old indexes are dropped only once the
new ones are built.
"""

from django.db import migrations

from newznab.migrations._concurrently import built_concurrently
from newznab.sql import queries


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("newznab", "0010_release_words_week"),
        ("catalog", "0006_release_inspection"),
    ]

    operations = [
        *built_concurrently("release_newest_index"),
        *built_concurrently("release_newest_category_index"),
        # Reversed: built again, a half-built one dropped first (as built_concurrently).
        migrations.RunSQL(
            queries["drop_release_listed_index"],
            [queries["drop_release_listed_index"], queries["create_release_listed_index"]],
        ),
        migrations.RunSQL(
            queries["drop_release_listed_category_index"],
            [
                queries["drop_release_listed_category_index"],
                queries["create_release_listed_category_index"],
            ],
        ),
    ]
