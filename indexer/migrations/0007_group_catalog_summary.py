"""Per-group catalog totals (group_catalog_summary), kept by triggers on catalog_file.

The table, then the triggers, their functions and the fill from the files
already stored, read from indexer/sql/migrations/catalog_summary.sql (docs/catalog.md,
"Totals").
"""

import django.db.models.deletion
from django.db import migrations, models

from indexer.sql import queries


class Migration(migrations.Migration):

    dependencies = [
        ('indexer', '0006_node'),
    ]

    operations = [
        migrations.CreateModel(
            name='GroupCatalogSummary',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('slot', models.SmallIntegerField()),
                ('files', models.BigIntegerField(default=0)),
                ('complete', models.BigIntegerField(default=0)),
                ('segments', models.BigIntegerField(default=0)),
                ('bytes', models.BigIntegerField(default=0)),
                ('conflicts', models.BigIntegerField(default=0)),
                ('newest', models.DateTimeField(blank=True, null=True)),
                ('group', models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='indexer.group')),
            ],
            options={
                'db_table': 'group_catalog_summary',
                'constraints': [models.UniqueConstraint(fields=('group', 'slot'), name='group_catalog_summary_key')],
            },
        ),
        migrations.RunSQL(
            queries["create_group_catalog_summary_triggers"],
            queries["drop_group_catalog_summary_triggers"],
        ),
    ]
