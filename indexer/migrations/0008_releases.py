"""Releases (catalog_release), the file's release_id, category rules per rule set.

The triggers that keep releases current are in sql/migrations/releases.sql
(docs/catalog.md, "Releases").
"""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.db.models.deletion
import django.db.models.functions.datetime
from django.db import migrations, models

from indexer.sql import queries


class Migration(migrations.Migration):

    dependencies = [
        ('indexer', '0007_group_catalog_summary'),
    ]

    operations = [
        migrations.AddField(
            model_name='rulesetversion',
            name='categories',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name='Release',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.BinaryField(max_length=16)),
                ('name', models.TextField()),
                ('poster', models.TextField()),
                ('posted', models.DateTimeField()),
                ('last_posted', models.DateTimeField()),
                ('size', models.BigIntegerField(default=0)),
                ('files_expected', models.IntegerField(blank=True, null=True)),
                ('files_seen', models.IntegerField(default=0)),
                ('segments_present', models.BigIntegerField(default=0)),
                ('segments_expected', models.BigIntegerField(default=0)),
                ('has_par2', models.BooleanField(default=False)),
                ('has_nfo', models.BooleanField(default=False)),
                ('category', models.IntegerField()),
                ('category_version', models.IntegerField()),
                ('groups', django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), default=list, size=None)),
                ('created_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ('updated_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
            ],
            options={
                'verbose_name': 'release',
                'db_table': 'catalog_release',
                'ordering': ['-posted', '-id'],
                'indexes': [models.Index(fields=['key', 'posted'], name='catalog_release_key_idx'), models.Index(fields=['-posted', '-id'], name='catalog_release_posted_idx'), models.Index(fields=['category', '-posted', '-id'], name='catalog_release_cat_idx'), models.Index(fields=['category_version', 'id'], name='catalog_release_catver_idx'), django.contrib.postgres.indexes.GinIndex(fields=['groups'], name='catalog_release_groups_idx')],
            },
        ),
        migrations.AddField(
            model_name='catalogfile',
            name='release',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='files', to='indexer.release'),
        ),
        migrations.AddIndex(
            model_name='catalogfile',
            index=models.Index(condition=models.Q(('release__isnull', False)), fields=['release'], name='catalog_file_release_id_idx'),
        ),
        migrations.RunSQL(
            queries["create_catalog_release_triggers"],
            queries["drop_catalog_release_triggers"],
        ),
    ]
