"""The inspection work table (issue 26) and the plan mark.

A new table: its indexes are built with it, nothing existing is locked. The
release reference is a database FK with ON DELETE CASCADE (the catalog
deletes releases in SQL, so Django's on_delete never runs): a pruned release
takes its inspection with it.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('catalog', '0005_release_upgrade'),
        ('indexer', '0015_catalog_moves_out'),
        ('seeding', '0014_queued_ranges_have_articles_left'),
    ]

    operations = [
        migrations.CreateModel(
            name='InspectionPlanMark',
            fields=[
                ('id', models.IntegerField(default=1, primary_key=True, serialize=False)),
                ('after_id', models.BigIntegerField(default=0)),
                ('mode', models.TextField()),
            ],
            options={
                'db_table': 'inspection_plan_mark',
                'constraints': [models.CheckConstraint(condition=models.Q(('id', 1)), name='inspection_plan_mark_one')],
            },
        ),
        migrations.CreateModel(
            name='Inspection',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('posted', models.DateTimeField()),
                ('articles', models.JSONField(default=list)),
                ('status', models.CharField(choices=[('queued', 'Queued'), ('leased', 'Leased'), ('done', 'Done'), ('failed', 'Failed')], default='queued', max_length=8)),
                ('epoch', models.IntegerField(default=0)),
                ('attempts', models.IntegerField(default=0)),
                ('uncounted_releases', models.IntegerField(default=0)),
                ('leased_at', models.DateTimeField(blank=True, null=True)),
                ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                ('error', models.TextField(blank=True, default='')),
                ('done_at', models.DateTimeField(blank=True, null=True)),
                ('planned_at', models.DateTimeField()),
                ('planned_segments', models.BigIntegerField(default=0)),
                ('outcome', models.JSONField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('group', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='indexer.group')),
                ('node', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='inspections', to='indexer.node')),
                ('release', models.OneToOneField(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='catalog.release')),
            ],
            options={
                'db_table': 'inspection',
                'ordering': ['-posted', '-id'],
                'indexes': [models.Index(models.OrderBy(models.F('posted'), descending=True), models.OrderBy(models.F('id'), descending=True), condition=models.Q(('status', 'queued'), models.Q(('articles', []), _negated=True)), name='inspection_claim_idx'), models.Index(condition=models.Q(('status', 'leased')), fields=['node'], name='inspection_live_node_idx')],
                'constraints': [models.CheckConstraint(condition=models.Q(models.Q(('status', 'leased'), _negated=True), models.Q(('node__isnull', False), ('heartbeat_at__isnull', False)), _connector='OR'), name='inspection_leased_has_holder'), models.CheckConstraint(condition=models.Q(('status__in', ['queued', 'leased', 'done', 'failed'])), name='inspection_status_known'), models.CheckConstraint(condition=models.Q(('attempts__gte', 0), ('epoch__gte', 0), ('uncounted_releases__gte', 0)), name='inspection_counts'), models.CheckConstraint(condition=models.Q(models.Q(('status', 'done'), _negated=True), ('error', ''), _connector='OR'), name='inspection_done_without_error')],
            },
        ),
        migrations.RunSQL(
            "ALTER TABLE inspection ADD CONSTRAINT inspection_release_fk FOREIGN KEY (release_id)"
            " REFERENCES catalog_release (id) ON DELETE CASCADE;",
            "ALTER TABLE inspection DROP CONSTRAINT inspection_release_fk;",
        ),
    ]
