"""Cheaper release upkeep in the batch path (docs/performance.md, "Keeping releases").

- The release triggers' aggregates without DISTINCT (one small sort per
  release in a batch); sql/migrations/releases.sql,
  `release_triggers_without_sorts`. Backwards: nothing to undo (the same results).
- No index on (category_version, id): every new release paid for it, and
  only `recategorize`, a rare full pass in id order, would read it.
"""

from django.db import migrations

from indexer.sql import queries


class Migration(migrations.Migration):

    dependencies = [
        ('indexer', '0008_releases'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='release',
            name='catalog_release_catver_idx',
        ),
        migrations.RunSQL(queries["release_triggers_without_sorts"], migrations.RunSQL.noop),
    ]
