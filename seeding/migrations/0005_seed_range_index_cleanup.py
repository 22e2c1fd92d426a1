"""Vacuum always cleans the claim index of seed_range.

Since PostgreSQL 14, VACUUM skips index cleanup when few heap pages hold dead
tuples. A queue is exactly that case: claims leave their dead entries at the
head of the claim index, on a handful of heap pages, so the bypass would let
every claim walk an ever longer run of dead entries. `vacuum_index_cleanup =
on` turns the bypass off for this table (docs/performance.md).
"""

from __future__ import annotations

from django.db import migrations

from seeding.sql import queries


class Migration(migrations.Migration):
    dependencies = [("seeding", "0004_range_summary_triggers")]
    # The statements are in sql/migrations/storage.sql; a block run here is never edited.
    operations = [
        migrations.RunSQL(
            queries["keep_claim_index_clean"], queries["reset_claim_index_cleanup"]
        )
    ]
