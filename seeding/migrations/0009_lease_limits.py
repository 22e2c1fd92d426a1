"""Lease limits: uncounted releases counted per range, and an index on a node's live
leases for the per-node cap (LEASE_MAX_PER_NODE; docs/security.md)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('indexer', '0008_rate_bucket'),
        ('seeding', '0008_claim_hooks'),
    ]

    operations = [
        migrations.AddField(
            model_name='seedrange',
            name='uncounted_releases',
            field=models.IntegerField(db_default=0, default=0),
        ),
        migrations.AddIndex(
            model_name='seedrange',
            index=models.Index(condition=models.Q(('status', 'leased')), fields=['node'], name='seed_range_live_node_idx'),
        ),
    ]
