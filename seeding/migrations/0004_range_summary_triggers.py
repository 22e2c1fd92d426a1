"""Keep group_range_summary current as seed ranges change.

- `group_range_summary_apply(g, s, n, a, r, h, f)` adds deltas (ranges,
  articles, reached, headers, files) per (group, status), in key order.
- Statement-level triggers with transition tables for INSERT and DELETE (a
  plan COPYs a million ranges in one statement); a row-level UPDATE trigger
  whose WHEN clause fires on a status change, a move, or progress of a range
  that is not leased. A batch only moves a leased range's resume point and
  counters, so the hot batch path never fires it: leased ranges count here by
  number and articles only, their progress is read live (few rows, a partial
  index). A lease or a finish fires it once per range.
- The summary is filled from the ranges already there.
"""

from __future__ import annotations

from django.db import migrations

from seeding.sql import queries

# The statements are in sql/migrations/summary.sql; a block run here is never edited.
FORWARD = "\n".join([
    queries["add_summary_group_fk"],
    queries["create_summary_apply_function"],
    queries["create_summary_row_functions"],
    queries["create_summary_statement_functions"],
    queries["create_summary_triggers"],
    queries["fill_summary"],
])
BACKWARD = queries["drop_summary"]


class Migration(migrations.Migration):
    dependencies = [("seeding", "0003_range_summary")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
