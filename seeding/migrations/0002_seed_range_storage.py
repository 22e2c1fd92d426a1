"""Storage settings that keep the claim fast in a steady state.

The claim reads partial indexes that fill with dead entries as ranges move
from queued to leased to done; vacuum must run early and without throttling
to keep them small. fillfactor leaves room on each page so heartbeat and
batch updates (which touch no indexed column) stay HOT. The figures behind
these numbers are in docs/performance.md.
"""

from __future__ import annotations

from django.db import migrations

from seeding.sql import queries

# The statements are in sql/migrations/storage.sql; a block run here is never edited.
FORWARD = queries["tune_range_storage"]
BACKWARD = queries["reset_range_storage"]


class Migration(migrations.Migration):
    dependencies = [("seeding", "0001_initial")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
