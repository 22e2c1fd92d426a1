"""A done range carries no error (it did not fail), whichever way it became done: the
errors earlier releases left on ranges that later became done other than by finish are
cleared, and a check constraint keeps it so (docs/api.md, release and finish).

Adding the constraint reads the table once under its lock (about a second at a million
ranges), after the update has cleared what would break it.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('indexer', '0014_release_near'),
        ('seeding', '0012_claim_mix'),
    ]

    operations = [
        migrations.RunSQL(
            "UPDATE seed_range SET error = '' WHERE status = 'done' AND error <> '';",
            migrations.RunSQL.noop,
        ),
        migrations.AddConstraint(
            model_name='seedrange',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'done'), _negated=True), ('error', ''), _connector='OR'), name='seed_range_done_without_error'),
        ),
    ]
