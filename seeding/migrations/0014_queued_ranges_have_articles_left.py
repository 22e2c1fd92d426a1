"""A queued range has articles left, by a check constraint, instead of a sweep through an
index on queued ranges read to their end: that index's condition named next_id, which made
every batch (it moves next_id) a non-HOT update. The queued ranges older versions left read
to their end are made done here, as the sweep did; no path queues one any more.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('indexer', '0014_release_near'),
        ('seeding', '0013_done_ranges_without_error'),
    ]

    operations = [
        migrations.RunSQL(
            "UPDATE seed_range SET status = 'done', done_at = now(), error = ''"
            " WHERE status = 'queued' AND next_id > end_id;",
            migrations.RunSQL.noop,
        ),
        migrations.RemoveIndex(
            model_name='seedrange',
            name='seed_range_read_queued_idx',
        ),
        migrations.AddConstraint(
            model_name='seedrange',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('status', 'queued'), _negated=True), ('next_id__lte', models.F('end_id')), _connector='OR'), name='seed_range_queued_has_articles_left'),
        ),
    ]
