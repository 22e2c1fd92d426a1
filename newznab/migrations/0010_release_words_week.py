"""The words of a release by week and category, for a word search in a newest
window or in categories (btree_gin: the week and the category in the words'
GIN index), which replaces the words' own GIN index (migration 0002).

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
        ("newznab", "0009_release_listed_title"),
    ]

    operations = [
        migrations.RunSQL(queries["create_btree_gin_extension"], migrations.RunSQL.noop),
        migrations.RunSQL(queries["create_week_function"], queries["drop_week_function"]),
        *built_concurrently("release_words_index"),
        migrations.RunSQL(
            queries["drop_release_search_index"], queries["create_release_search_index"]
        ),
    ]
