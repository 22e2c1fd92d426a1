"""An index built CONCURRENTLY by a migration (the migration loader skips this
module: its name begins with "_").

A 10M-row catalog is not locked while such an index builds, so the migration is
not atomic (`atomic = False`), and a build that failed half-way leaves an invalid
index behind: the index is dropped first, so running the migration again builds it
anew.
"""

from __future__ import annotations

from django.db import migrations

from newznab.sql import queries


def built_concurrently(index: str) -> list[migrations.RunSQL]:
    """The operations for the blocks `drop_<index>` and `create_<index>`: drop a
    half-built one, then build it (reversed: dropped)."""
    drop, create = queries[f"drop_{index}"], queries[f"create_{index}"]
    return [migrations.RunSQL(drop, migrations.RunSQL.noop), migrations.RunSQL(create, drop)]
