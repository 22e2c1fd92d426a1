"""The catalog becomes its own app: state only, the tables keep their names.

The four models leave the indexer app's state in indexer 0015 (this
migration runs before it); nothing in the database moves. The content types
are relabelled indexer -> catalog, so the permission rows, and every user's
and group's grants of them (`indexer.view_catalogfile` is now
`catalog.view_catalogfile`), and the admin's history follow.
"""

from __future__ import annotations

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.db.models.deletion
import django.db.models.functions.datetime
from django.db import migrations, models

MOVED = ("catalogfile", "groupcatalogsummary", "release", "rulesetversion")


def relabel_content_types(apps, schema_editor, source="indexer", target="catalog"):
    content_type = apps.get_model("contenttypes", "ContentType")
    taken = content_type.objects.filter(app_label=target, model__in=MOVED)
    kept = set(taken.values_list("model", flat=True))
    moving = [model for model in MOVED if model not in kept]
    content_type.objects.filter(app_label=source, model__in=moving).update(app_label=target)
    content_type.objects.clear_cache()


def relabel_content_types_back(apps, schema_editor):
    relabel_content_types(apps, schema_editor, source="catalog", target="indexer")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("indexer", "0014_release_near"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]
    # Before the indexer drops the models from its state.
    run_before = [("indexer", "0015_catalog_moves_out")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='RuleSetVersion',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('version', models.IntegerField(unique=True)),
                        ('rules', models.JSONField()),
                        ('categories', models.JSONField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('created_by', models.CharField(blank=True, default='', max_length=150)),
                        ('note', models.TextField(blank=True, default='')),
                    ],
                    options={
                        'verbose_name': 'rule set version',
                        'db_table': 'rule_set_version',
                        'ordering': ['-version'],
                    },
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
                        'indexes': [models.Index(fields=['key', 'posted'], name='catalog_release_key_idx'), models.Index(fields=['-posted', '-id'], name='catalog_release_posted_idx'), models.Index(fields=['category', '-posted', '-id'], name='catalog_release_cat_idx'), django.contrib.postgres.indexes.GinIndex(fields=['groups'], name='catalog_release_groups_idx')],
                    },
                ),
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
                migrations.CreateModel(
                    name='CatalogFile',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.BinaryField(max_length=16)),
                        ('release_key', models.BinaryField(blank=True, max_length=16, null=True)),
                        ('rule_version', models.IntegerField()),
                        ('subject', models.TextField()),
                        ('poster', models.TextField()),
                        ('name', models.TextField()),
                        ('file_index', models.IntegerField(blank=True, null=True)),
                        ('file_count', models.IntegerField(blank=True, null=True)),
                        ('total', models.IntegerField()),
                        ('date', models.DateTimeField()),
                        ('parts', django.contrib.postgres.fields.ArrayField(base_field=models.IntegerField(), size=None)),
                        ('articles', django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), size=None)),
                        ('sizes', django.contrib.postgres.fields.ArrayField(base_field=models.IntegerField(), size=None)),
                        ('message_ids', django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), size=None)),
                        ('conflict_ids', django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), blank=True, default=list, size=None)),
                        ('segments', models.IntegerField()),
                        ('bytes', models.BigIntegerField()),
                        ('complete', models.BooleanField()),
                        ('conflicts', models.IntegerField(default=0)),
                        ('created_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                        ('updated_at', models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                        ('group', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='catalog_files', to='indexer.group')),
                        ('release', models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='files', to='catalog.release')),
                    ],
                    options={
                        'verbose_name': 'catalog file',
                        'db_table': 'catalog_file',
                        'ordering': ['-id'],
                        'indexes': [models.Index(fields=['group', '-id'], name='catalog_file_group_id_idx'), models.Index(condition=models.Q(('complete', False)), fields=['updated_at'], name='catalog_file_incomplete_idx'), models.Index(condition=models.Q(('release_key__isnull', False)), fields=['release_key'], name='catalog_file_release_idx'), models.Index(condition=models.Q(('release__isnull', False)), fields=['release'], name='catalog_file_release_id_idx')],
                        'constraints': [models.UniqueConstraint(fields=('group', 'key'), name='catalog_file_group_key')],
                    },
                ),
            ],
        ),
        migrations.RunPython(relabel_content_types, relabel_content_types_back),
    ]
