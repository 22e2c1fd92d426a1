"""tvsearch and movie on the fields of a release's name: the title indexes.

Built CONCURRENTLY (a 10M-row catalog is not locked while it builds), so the
migration is not atomic; a build that failed half-way is dropped and built
again when the migration is run again.
"""

from django.db import migrations

from newznab.migrations._concurrently import built_concurrently
from newznab.sql import queries


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("newznab", "0005_installation"),
        ("catalog", "0002_release_fields"),
    ]

    operations = [
        migrations.RunSQL(queries["create_title_function"], queries["drop_title_function"]),
        *built_concurrently("release_title_index"),
        *built_concurrently("release_title_multi_index"),
    ]
