"""The range claim's urgency mix counts range leases only (a lane's `next` hands out ranges
too, which the leases app names through the view seed_range_window_lease), ties go to
urgent work, and the mix applies when held lanes crowd the queue as well: the crowded
hook, seed_range_pick_unheld, is asked from a priority on and answers the range's
priority (sql/migrations/claim.sql).
"""

from __future__ import annotations

from django.db import migrations

from seeding.sql import queries

FORWARD = "\n".join([
    queries["create_window_lease_view"],
    queries["create_pick_unheld_at_function"],
    queries["create_claimable_function"],
    queries["create_mixed_claim_function"],
])
BACKWARD = "\n".join([
    queries["create_claim_function"],
    queries["drop_mixed_claim_hooks"],
])


class Migration(migrations.Migration):
    dependencies = [("seeding", "0011_finished_ranges_rollup")]
    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
