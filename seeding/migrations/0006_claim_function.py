"""Superseded by 0008, which installs the claim from sql/migrations/claim.sql.

This migration once installed a claim that read the leases app's tables
itself. It is kept, empty, so that databases that ran it keep a whole
migration history; 0008 drops the function it created.
"""

from __future__ import annotations

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("seeding", "0005_seed_range_index_cleanup")]
    operations = []  # type: ignore[var-annotated]
