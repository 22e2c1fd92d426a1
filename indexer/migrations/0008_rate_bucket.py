"""Rate limits in PostgreSQL: the rate_bucket table and rate_hit(), from
indexer/sql/migrations/throttle.sql (docs/security.md, "Limits")."""

from __future__ import annotations

from django.db import migrations

from indexer.sql import queries

FORWARD = "\n".join([queries["create_rate_bucket"], queries["create_rate_hit_function"]])


class Migration(migrations.Migration):
    dependencies = [("indexer", "0007_group_catalog_summary")]
    operations = [migrations.RunSQL(FORWARD, queries["drop_rate_bucket"])]
