"""Vacuum always cleans the claim index of seed_range.

Since PostgreSQL 14, VACUUM skips index cleanup when few heap pages hold dead
tuples. A queue is exactly that case: claims leave their dead entries at the
head of the claim index, on a handful of heap pages, so the bypass would let
every claim walk an ever longer run of dead entries. `vacuum_index_cleanup =
on` turns the bypass off for this table (docs/performance.md).
"""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("seeding", "0004_range_summary_triggers")]
    operations = [
        migrations.RunSQL(
            "ALTER TABLE seed_range SET (vacuum_index_cleanup = on)",
            "ALTER TABLE seed_range RESET (vacuum_index_cleanup)",
        )
    ]
