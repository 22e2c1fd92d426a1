"""Storage settings that keep the claim fast in a steady state.

The claim reads partial indexes that fill with dead entries as ranges move
from queued to leased to done; vacuum must run early and without throttling
to keep them small. fillfactor leaves room on each page so heartbeat and
batch updates (which touch no indexed column) stay HOT. The figures behind
these numbers are in docs/performance.md.
"""

from __future__ import annotations

from django.db import migrations

FORWARD = """
ALTER TABLE seed_range SET (
    fillfactor = 80,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 5000,
    autovacuum_vacuum_cost_delay = 0,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02
);
ALTER TABLE header_rollup SET (fillfactor = 70);
"""
BACKWARD = """
ALTER TABLE seed_range RESET (fillfactor, autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold,
    autovacuum_vacuum_cost_delay, autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_scale_factor);
ALTER TABLE header_rollup RESET (fillfactor);
"""


class Migration(migrations.Migration):
    dependencies = [("seeding", "0001_initial")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
